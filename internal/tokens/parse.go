package tokens

import (
	"fmt"
	"io"
	"math"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Server is the kind of inference server a target runs.
type Server string

// The servers whose metrics pages the scraper reads.
const (
	VLLM Server = "vllm"
	TGI  Server = "tgi"
)

// Counters are one replica's cumulative totals since its server started.
type Counters struct {
	PromptTokens     int64
	GenerationTokens int64
	Requests         int64
}

// source says where one counter lives on a server's page, in order of preference: plain
// counters first, then histogram or summary sums (a token total is the sum of per-request token
// counts) and counts (a request total is the number of observations).
type source struct {
	counters []string
	sums     []string
	counts   []string
}

type layout struct{ prompt, generation, requests source }

// layouts lists the names each server exposes. vLLM has renamed metrics across releases and
// exposition modes (with and without the _total suffix), so every known name is accepted. TGI
// has no token counter: its per-request histograms' sums are the totals.
var layouts = map[Server]layout{
	VLLM: {
		prompt: source{counters: []string{"vllm:prompt_tokens_total", "vllm:prompt_tokens"},
			sums: []string{"vllm:request_prompt_tokens"}},
		generation: source{counters: []string{"vllm:generation_tokens_total", "vllm:generation_tokens"},
			sums: []string{"vllm:request_generation_tokens"}},
		requests: source{counters: []string{"vllm:request_success_total", "vllm:request_success"},
			counts: []string{"vllm:e2e_request_latency_seconds", "vllm:request_generation_tokens"}},
	},
	TGI: {
		prompt:     source{sums: []string{"tgi_request_input_length"}},
		generation: source{sums: []string{"tgi_request_generated_tokens"}},
		requests: source{counters: []string{"tgi_request_success", "tgi_request_success_total"},
			counts: []string{"tgi_request_generated_tokens"}},
	},
}

// Parse reads a Prometheus text exposition page from server and returns its token and request
// totals, summed over every label set (engines, models, finish reasons). A page without the
// server's token metrics is an error: it is the wrong server or the wrong URL.
func Parse(r io.Reader, server Server) (Counters, error) {
	l, ok := layouts[server]
	if !ok {
		return Counters{}, fmt.Errorf("unknown inference server %q (want vllm or tgi)", server)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return Counters{}, fmt.Errorf("parsing %s metrics: %w", server, err)
	}
	var c Counters
	var found [3]bool
	for i, f := range []struct {
		src source
		dst *int64
	}{{l.prompt, &c.PromptTokens}, {l.generation, &c.GenerationTokens}, {l.requests, &c.Requests}} {
		v, ok := lookup(fams, f.src)
		if !ok {
			continue
		}
		if math.IsNaN(v) || v < 0 || v > math.MaxInt64/2 {
			return Counters{}, fmt.Errorf("parsing %s metrics: counter value %v out of range", server, v)
		}
		*f.dst, found[i] = int64(math.Round(v)), true
	}
	if !found[0] && !found[1] {
		return Counters{}, fmt.Errorf("no %s token metrics on the page (looked for %s)", server,
			strings.Join(append(l.prompt.counters, l.prompt.sums...), ", "))
	}
	return c, nil
}

func lookup(fams map[string]*dto.MetricFamily, s source) (float64, bool) {
	for _, name := range s.counters {
		if v, ok := plain(fams[name]); ok {
			return v, true
		}
	}
	for _, name := range s.sums {
		if v, ok := aggregate(fams, name, "_sum"); ok {
			return v, true
		}
	}
	for _, name := range s.counts {
		if v, ok := aggregate(fams, name, "_count"); ok {
			return v, true
		}
	}
	return 0, false
}

// plain sums a counter, gauge or untyped family over its label sets.
func plain(f *dto.MetricFamily) (float64, bool) {
	if f == nil || len(f.GetMetric()) == 0 {
		return 0, false
	}
	var sum float64
	for _, m := range f.GetMetric() {
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			sum += m.GetCounter().GetValue()
		case dto.MetricType_GAUGE:
			sum += m.GetGauge().GetValue()
		case dto.MetricType_UNTYPED:
			sum += m.GetUntyped().GetValue()
		default:
			return 0, false
		}
	}
	return sum, true
}

// aggregate sums a histogram's or summary's _sum or _count over its label sets; a page without
// the TYPE line exposes name_sum and name_count as untyped series, which are read instead.
func aggregate(fams map[string]*dto.MetricFamily, name, suffix string) (float64, bool) {
	f := fams[name]
	if f == nil || len(f.GetMetric()) == 0 {
		return plain(fams[name+suffix])
	}
	var sum float64
	for _, m := range f.GetMetric() {
		switch {
		case f.GetType() == dto.MetricType_HISTOGRAM && suffix == "_sum":
			sum += m.GetHistogram().GetSampleSum()
		case f.GetType() == dto.MetricType_HISTOGRAM:
			sum += float64(m.GetHistogram().GetSampleCount())
		case f.GetType() == dto.MetricType_SUMMARY && suffix == "_sum":
			sum += m.GetSummary().GetSampleSum()
		case f.GetType() == dto.MetricType_SUMMARY:
			sum += float64(m.GetSummary().GetSampleCount())
		default:
			return plain(fams[name+suffix])
		}
	}
	return sum, true
}
