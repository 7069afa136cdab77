package serving

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// ProfileQuery picks the rows of a throughput table: one model, tensor-parallel degree, request
// size and TPOT target. The defaults are SERVING.md's: Llama-2-70B, TP 8, TPOT <= 50 ms, and the
// (prompt 512, output 128) rows, the only ones of the Splitwise table with a batch sweep.
type ProfileQuery struct {
	Model          string
	TensorParallel int
	PromptTokens   int
	OutputTokens   int
	TPOTms         int
}

// DefaultProfileQuery is the benchmark's default profile.
func DefaultProfileQuery() ProfileQuery {
	return ProfileQuery{Model: "llama2-70b", TensorParallel: 8, PromptTokens: 512, OutputTokens: 128, TPOTms: 50}
}

// Throughput is one GPU type's replica: its output tokens/s at the target and its GPUs.
type Throughput struct {
	Rate float64
	GPUs int
}

// Profile is a throughput table read for one query: what a replica of each GPU type serves.
type Profile struct {
	Name  string
	Query ProfileQuery
	Types map[string]Throughput
}

// hardwareTypes maps the Splitwise table's hardware names to the GPU models of the catalogs and
// the fleet. Power-capped variants (h100-80gb-pcap) are not a type one can buy; they are skipped.
var hardwareTypes = map[string]string{"a100-80gb": "A100-80GB", "h100-80gb": "H100-80GB"}

// ParseProfile reads a Splitwise-style table (columns model, hardware, tensor_parallel,
// prompt_size, output_tokens, tpot_slo_ms, decode_tokens_per_s_per_replica) and keeps the rows
// of q. A row of q without a rate (no batch meets the target) leaves its type out.
func ParseProfile(name string, r io.Reader, q ProfileQuery) (*Profile, error) {
	tb, err := readTable(name, r, "model", "hardware", "tensor_parallel", "prompt_size",
		"output_tokens", "tpot_slo_ms", "decode_tokens_per_s_per_replica")
	if err != nil {
		return nil, err
	}
	p := &Profile{Name: name, Query: q, Types: map[string]Throughput{}}
	for i := range tb.rows {
		match, err := q.matches(tb, i)
		if err != nil || !match {
			if err != nil {
				return nil, err
			}
			continue
		}
		gpu, ok := hardwareTypes[tb.str(i, "hardware")]
		if !ok || tb.str(i, "decode_tokens_per_s_per_replica") == "" {
			continue
		}
		rate, err := tb.num(i, "decode_tokens_per_s_per_replica")
		if err != nil {
			return nil, err
		}
		if rate == 0 {
			return nil, tb.errf(i, "decode_tokens_per_s_per_replica is 0: a replica that serves nothing")
		}
		if _, dup := p.Types[gpu]; dup {
			return nil, tb.errf(i, "a second row for %s under the same model, TP, size and TPOT", gpu)
		}
		p.Types[gpu] = Throughput{Rate: rate, GPUs: q.TensorParallel}
	}
	if len(p.Types) == 0 {
		return nil, fmt.Errorf("%s: no row with a rate for %s: pick another --model or --tpot-ms", name, q)
	}
	return p, nil
}

// matches reports whether row i is one of q's; the numeric columns must be whole numbers.
func (q ProfileQuery) matches(tb *table, i int) (bool, error) {
	if tb.str(i, "model") != q.Model {
		return false, nil
	}
	for c, want := range map[string]int{"tensor_parallel": q.TensorParallel, "prompt_size": q.PromptTokens,
		"output_tokens": q.OutputTokens, "tpot_slo_ms": q.TPOTms} {
		v, err := tb.whole(i, c)
		if err != nil {
			return false, err
		}
		if v != want {
			return false, nil
		}
	}
	return true, nil
}

func (q ProfileQuery) String() string {
	return q.Model + " TP" + strconv.Itoa(q.TensorParallel) + " prompt " + strconv.Itoa(q.PromptTokens) +
		" output " + strconv.Itoa(q.OutputTokens) + " TPOT<=" + strconv.Itoa(q.TPOTms) + "ms"
}

// TypeNames lists the profile's GPU types, sorted.
func (p *Profile) TypeNames() []string {
	var out []string
	for t := range p.Types {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// Fastest is the highest per-replica rate in the profile.
func (p *Profile) Fastest() float64 {
	best := 0.0
	for _, tp := range p.Types {
		best = max(best, tp.Rate)
	}
	return best
}

// Describe is the profile as results name it.
func (p *Profile) Describe() string {
	var parts []string
	for _, t := range p.TypeNames() {
		parts = append(parts, fmt.Sprintf("%s %.1f tok/s", t, p.Types[t].Rate))
	}
	return fmt.Sprintf("%s (%s: %s per replica of %d GPUs)", p.Name, p.Query, strings.Join(parts, ", "), p.Query.TensorParallel)
}
