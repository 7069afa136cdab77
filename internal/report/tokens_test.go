package report

import (
	"strings"
	"testing"
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
	if _, err := Tokens(ctxT(t), st, TokenOptions{Options: opts("09:00", "12:00", Market)}); err == nil {
		t.Error("tokens by market is accepted, but counters have no market")
	}
}
