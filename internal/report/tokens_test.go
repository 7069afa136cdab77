package report

import (
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/store"
	"github.com/bursar-dev/bursar/internal/store/storetest"
)

func TestTokens(t *testing.T) {
	st := history(t)
	tests := []struct {
		name string
		o    Options
		want []string
	}{
		{
			// aws: $27 for 6M tokens; an input token costs 27/(4.5M + 4 x 1.5M). gcp: $9 for 3M.
			name: "whole hours", o: opts("09:00", "12:00", Location),
			want: []string{
				"aws-use1 prompt_tokens=4500000 generation_tokens=1500000 requests=190 usd=27 usd_per_m_tokens=4.5 usd_per_m_input=2.5714 usd_per_m_output=10.2857",
				"gcp-usc1 prompt_tokens=2000000 generation_tokens=1000000 requests=70 usd=9 usd_per_m_tokens=3 usd_per_m_input=1.5 usd_per_m_output=6",
			},
		},
		{
			// Only the 10:00 sample and the reset at 11:00 fall inside: 3M + 1M tokens for $15.50;
			// gcp's only increase is at 11:30, after the window.
			name: "edges", o: opts("09:30", "11:15", Location),
			want: []string{
				"aws-use1 prompt_tokens=3000000 generation_tokens=1000000 requests=140 usd=15.5 usd_per_m_tokens=3.875 usd_per_m_input=2.2143 usd_per_m_output=8.8571",
				"gcp-usc1 prompt_tokens=0 generation_tokens=0 requests=0 usd=5.25 usd_per_m_tokens=0 usd_per_m_input=0 usd_per_m_output=0",
			},
		},
		{
			// $36 for 9M tokens; an input token costs 36/(6.5M + 4 x 2.5M).
			name: "blended", o: opts("09:00", "12:00", Workload),
			want: []string{
				"chat prompt_tokens=6500000 generation_tokens=2500000 requests=260 usd=36 usd_per_m_tokens=4 usd_per_m_input=2.1818 usd_per_m_output=8.7273",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Tokens(ctxT(t), st, TokenOptions{Options: tt.o})
			if err != nil {
				t.Fatal(err)
			}
			g := got(res, "prompt_tokens", "generation_tokens", "requests", "usd", "usd_per_m_tokens", "usd_per_m_input", "usd_per_m_output")
			if strings.Join(g, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(g, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestTokensByOffer splits an hour's tokens between the two offers that ran them, by each GPU
// type's rate (or per replica), and keeps the tokens of an hour in which nothing ran apart.
func TestTokensByOffer(t *testing.T) {
	st := twoTypes(t)
	rated := func(o Options) Options {
		o.Fleet = testFleet()
		o.Fleet.Workloads[0].GPU.Models = []string{"H100-80GB", "A100-80GB"}
		o.Fleet.Workloads[0].Scaling.Metric = fleet.MetricTokens
		o.Fleet.Workloads[0].Serving.PerReplica = map[string]float64{"H100-80GB": 3, "A100-80GB": 1}
		return o
	}
	bare := func(o Options) Options { o.Fleet = nil; return o }
	gpuOnly := opts("10:00", "12:00", Workload)
	gpuOnly.Filter = Filter{GPU: {"H100-80GB"}}
	tests := []struct {
		name string
		o    TokenOptions
		want []string
	}{
		{
			// One H100 replica at rate 3 against two A100s at rate 1: 3/5 and 2/5 of hour 10; hour
			// 11's tokens came after both series stopped.
			name: "rated", o: TokenOptions{Options: rated(opts("10:00", "12:00", GPU))},
			want: []string{
				"(unattributed) prompt_tokens=100000 generation_tokens=100000 requests=10 usd=0",
				"A100-80GB prompt_tokens=480000 generation_tokens=240000 requests=48 usd=6",
				"H100-80GB prompt_tokens=720000 generation_tokens=360000 requests=72 usd=10",
			},
		},
		{
			name: "per replica", o: TokenOptions{Options: bare(opts("10:00", "11:00", Market))},
			want: []string{
				"on_demand prompt_tokens=800000 generation_tokens=400000 requests=80 usd=6",
				"spot prompt_tokens=400000 generation_tokens=200000 requests=40 usd=10",
			},
		},
		{
			name: "filtered", o: TokenOptions{Options: rated(gpuOnly)},
			want: []string{"chat prompt_tokens=720000 generation_tokens=360000 requests=72 usd=10"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Tokens(ctxT(t), st, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			g := got(res, "prompt_tokens", "generation_tokens", "requests", "usd")
			if strings.Join(g, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(g, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// twoTypes is chat at aws-use1 from 10:00 to 11:00 on one H100 spot replica ($10/h) and two A100
// on-demand replicas ($3/h each), with 1.8M tokens counted at 10:30 and 0.2M at 11:30.
func twoTypes(t *testing.T) *store.Store {
	st := storetest.New(t)
	const h100 = "aws-use1/us-east-1a/p5.48xlarge/spot"
	const a100 = "aws-use1/-/p4de.24xlarge/on_demand"
	seedReplicas(t, st,
		replicaSample{"10:00", "chat", "aws-use1", "aws", "spot", h100, "H100-80GB", 8, 1, 10},
		replicaSample{"11:00", "chat", "aws-use1", "aws", "spot", h100, "H100-80GB", 8, 1, 10},
		replicaSample{"10:00", "chat", "aws-use1", "aws", "on_demand", a100, "A100-80GB", 8, 2, 3},
		replicaSample{"11:00", "chat", "aws-use1", "aws", "on_demand", a100, "A100-80GB", 8, 2, 3},
	)
	seedTokens(t, st,
		tokenSample{"10:00", "chat", "aws-use1", "r1", 0, 0, 0, false},
		tokenSample{"10:30", "chat", "aws-use1", "r1", 1_200_000, 600_000, 120, false},
		tokenSample{"11:30", "chat", "aws-use1", "r1", 1_300_000, 700_000, 130, false},
	)
	return st
}
