// Package placementtest runs the placement planner on scenarios written as short text files, the
// way Prometheus' promqltest runs queries: a scenario builds a snapshot line by line, and the
// plan block says what the planner must decide. Files stay readable and diff well in review.
//
// A scenario file:
//
//	# a reclaimed spot replica is replaced on the other zone
//	now 2025-01-01T00:00:00Z
//	policy max_hedge=-1
//	location a zone=a provider=aws
//	offer a-spot location=a type=p3 gpu=V100 count=1 market=spot price=1 capacity=4
//	history a-spot preempted at=-10m lived=2h
//	workload svc gpus=V100 min=2 demand=2 cold=2m markets=spot,on_demand
//	workload chat rates=A100-80GB:172,H100-80GB:829 rate=1000 unit=tokens/s
//	replica r1 workload=svc offer=a-spot state=reclaimed since=-3h deadline=+2m
//	budget cap team=ml max=10
//	plan
//	  launch svc a-spot 1 reclaim
//	  drain svc a-od r2 cheaper_offer
//	  scale svc 1 budget approval
//	  cost 1.00 -> 2.00
//
// Times are RFC 3339 or offsets from now ("-10m", "+2m"). The plan block lists every action the
// planner must emit (in any order) and, optionally, the cost per hour before and after.
package placementtest

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/placement"
)

// Scenario is a parsed scenario file.
type Scenario struct {
	Name     string
	Now      time.Time
	Policy   placement.Policy
	Snapshot placement.Snapshot
	// Want is the plan block: one canonical line per action, and a cost line when given.
	Want []string
}

// Parse reads a scenario. Errors name the line and say what was expected.
func Parse(name string, r io.Reader) (Scenario, error) {
	sc := Scenario{Name: name, Now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	p := parser{sc: &sc}
	lines := bufio.NewScanner(r)
	n := 0
	for lines.Scan() {
		n++
		line := strings.TrimSpace(lines.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := p.line(line); err != nil {
			return sc, fmt.Errorf("%s:%d: %w", name, n, err)
		}
	}
	if err := lines.Err(); err != nil {
		return sc, fmt.Errorf("reading %s: %w", name, err)
	}
	return sc, nil
}

type parser struct {
	sc     *Scenario
	inPlan bool
}

func (p *parser) line(line string) error {
	f := strings.Fields(line)
	if p.inPlan {
		p.sc.Want = append(p.sc.Want, strings.Join(f, " "))
		return nil
	}
	kv, err := pairs(f[1:])
	if err != nil {
		return err
	}
	switch f[0] {
	case "now":
		if len(f) != 2 {
			return fmt.Errorf("now takes one RFC 3339 time, got %q", line)
		}
		t, err := time.Parse(time.RFC3339, f[1])
		if err != nil {
			return fmt.Errorf("now: %w", err)
		}
		p.sc.Now = t
		return nil
	case "seed":
		if len(f) != 2 {
			return fmt.Errorf("seed takes one number, got %q", line)
		}
		v, err := strconv.ParseUint(f[1], 10, 64)
		p.sc.Snapshot.Seed = v
		return err
	case "policy":
		return p.policy(kv)
	case "plan":
		p.inPlan = true
		return nil
	}
	if len(f) < 2 {
		return fmt.Errorf("%s needs a name", f[0])
	}
	switch f[0] {
	case "location":
		return p.location(f[1], kv)
	case "offer":
		return p.offer(f[1], kv)
	case "history":
		return p.history(f[1], f[2:])
	case "workload":
		return p.workload(f[1], kv)
	case "replica":
		return p.replica(f[1], kv)
	case "budget":
		return p.budget(f[1], kv)
	}
	return fmt.Errorf("unknown directive %q (want now, seed, policy, location, offer, history, workload, replica, budget or plan)", f[0])
}

// kvs holds key=value pairs and remembers which were read, so a typo is an error.
type kvs struct {
	m    map[string]string
	used map[string]bool
	err  error
}

func pairs(fields []string) (*kvs, error) {
	kv := &kvs{m: map[string]string{}, used: map[string]bool{}}
	for _, f := range fields {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue // positional words are read by the directive itself
		}
		kv.m[k] = v
	}
	return kv, nil
}

func (kv *kvs) str(k string) string {
	kv.used[k] = true
	return kv.m[k]
}

func (kv *kvs) list(k string) []string {
	s := kv.str(k)
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func (kv *kvs) num(k string) float64 {
	s := kv.str(k)
	if s == "" || kv.err != nil {
		return 0
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		kv.err = fmt.Errorf("%s=%q is not a number", k, s)
	}
	return v
}

// rates reads "MODEL:RATE,MODEL:RATE" (a workload's throughput per GPU model).
func (kv *kvs) rates(k string) map[string]float64 {
	if kv.err != nil {
		return nil
	}
	var out map[string]float64
	for _, pair := range kv.list(k) {
		m, v, ok := strings.Cut(pair, ":")
		r, err := strconv.ParseFloat(v, 64)
		if !ok || m == "" || err != nil {
			kv.err = fmt.Errorf("%s=%q: %q is not MODEL:RATE (like H100-80GB:829)", k, kv.m[k], pair)
			return nil
		}
		if out == nil {
			out = map[string]float64{}
		}
		out[m] = r
	}
	return out
}

func (kv *kvs) int(k string) int {
	s := kv.str(k)
	if s == "" || kv.err != nil {
		return 0
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		kv.err = fmt.Errorf("%s=%q is not a whole number", k, s)
	}
	return v
}

func (kv *kvs) dur(k string) time.Duration {
	s := kv.str(k)
	if s == "" || kv.err != nil {
		return 0
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		kv.err = fmt.Errorf("%s=%q is not a duration (like 2m or 1h30m)", k, s)
	}
	return v
}

// at reads an RFC 3339 time or an offset from now.
func (kv *kvs) at(k string, now time.Time) time.Time {
	s := kv.str(k)
	if s == "" || kv.err != nil {
		return time.Time{}
	}
	if s[0] == '+' || s[0] == '-' {
		d, err := time.ParseDuration(s)
		if err != nil {
			kv.err = fmt.Errorf("%s=%q is not an offset (like -10m or +2m)", k, s)
		}
		return now.Add(d)
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		kv.err = fmt.Errorf("%s=%q is neither an RFC 3339 time nor an offset", k, s)
	}
	return t
}

// done reports the first bad value or unknown key.
func (kv *kvs) done() error {
	if kv.err != nil {
		return kv.err
	}
	var unknown []string
	for k := range kv.m {
		if !kv.used[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return fmt.Errorf("unknown key %q", unknown[0])
	}
	return nil
}
