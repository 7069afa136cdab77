package recorder

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
)

// series remembers each series' latest sample, so that a replica.state row can carry the
// interval it closes (for the exact cost integral) and a tokens.sample row the increase of its
// counters. Times are kept to the millisecond, as stored. A sample at or before the series'
// latest (a redelivery, a duplicate, a late arrival) closes an empty interval and adds no
// tokens, so it never double-counts. The state is rebuilt from ClickHouse at start, so a series
// belongs to one recorder: partition recorders by subject.
type series struct {
	replicas map[replicaKey]replicaLast
	tokens   map[tokensKey]tokensLast
}

type replicaKey struct{ workload, location, market, offer string }

type replicaLast struct {
	at        time.Time
	ready     int64
	usd       float64
	instances []string
}

type tokensKey struct{ location, workload, replica string }

type tokensLast struct {
	at                    time.Time
	prompt, gen, requests int64
}

func newSeries() *series {
	return &series{replicas: map[replicaKey]replicaLast{}, tokens: map[tokensKey]tokensLast{}}
}

func ms(t time.Time) time.Time { return t.Truncate(time.Millisecond).UTC() }

// extra returns the derived columns of e and moves its series on.
func (s *series) extra(e events.Event) extra {
	switch e := e.(type) {
	case *events.ReplicaState:
		return s.replica(e)
	case *events.TokensSample:
		return s.token(e)
	}
	return extra{}
}

func (s *series) replica(e *events.ReplicaState) extra {
	at := ms(e.At)
	k := replicaKey{e.Workload, e.Location, string(e.Market), e.Offer}
	last, ok := s.replicas[k]
	x := extra{prevAt: at} // an empty interval unless a previous sample opens one
	if ok && !at.After(last.at) {
		return x
	}
	if ok {
		x = extra{prevAt: last.at, prevReady: last.ready, prevUSDPerHour: last.usd, prevInstances: last.instances}
	}
	s.replicas[k] = replicaLast{at: at, ready: int64(e.Ready), usd: e.USDPerHour, instances: e.Instances}
	return x
}

func (s *series) token(e *events.TokensSample) extra {
	at := ms(e.At)
	k := tokensKey{e.Location, e.Workload, e.Replica}
	last, ok := s.tokens[k]
	if ok && !at.After(last.at) {
		return extra{}
	}
	s.tokens[k] = tokensLast{at: at, prompt: e.PromptTokens, gen: e.GenerationTokens, requests: e.Requests}
	switch {
	case e.Reset: // the server restarted: its counters count from zero
		return extra{deltaPrompt: e.PromptTokens, deltaGeneration: e.GenerationTokens, deltaRequests: e.Requests}
	case !ok: // the first sample seen is the baseline
		return extra{}
	}
	return extra{
		deltaPrompt:     increase(last.prompt, e.PromptTokens),
		deltaGeneration: increase(last.gen, e.GenerationTokens),
		deltaRequests:   increase(last.requests, e.Requests),
	}
}

// increase is a counter's growth; a counter that went down restarted from zero.
func increase(prev, now int64) int64 {
	if now < prev {
		return now
	}
	return now - prev
}

// querier runs a SELECT and returns JSONEachRow.
type querier interface {
	Query(ctx context.Context, query string) ([]byte, error)
	Table(name string) string
}

// load rebuilds the latest sample of every series from the tables.
func (s *series) load(ctx context.Context, q querier) error {
	var reps []struct {
		Workload, Location, Market, Offer string
		AtMS                              int64 `json:"at_ms"`
		Ready                             int64
		USD                               float64
		Instances                         []string
	}
	err := queryRows(ctx, q, fmt.Sprintf(`SELECT workload, location, market, offer,
		toUnixTimestamp64Milli(max(at)) AS at_ms, argMax(ready, at) AS ready, argMax(usd_per_hour, at) AS usd,
		argMax(instances, at) AS instances
		FROM %s GROUP BY workload, location, market, offer`, q.Table("replica_state")), &reps)
	if err != nil {
		return err
	}
	for _, r := range reps {
		s.replicas[replicaKey{r.Workload, r.Location, r.Market, r.Offer}] = replicaLast{time.UnixMilli(r.AtMS).UTC(), r.Ready, r.USD, r.Instances}
	}
	var toks []struct {
		Location, Workload, Replica string
		AtMS                        int64 `json:"at_ms"`
		Prompt, Gen, Requests       int64
	}
	err = queryRows(ctx, q, fmt.Sprintf(`SELECT location, workload, replica,
		toUnixTimestamp64Milli(max(at)) AS at_ms, argMax(prompt_tokens, at) AS prompt,
		argMax(generation_tokens, at) AS gen, argMax(requests, at) AS requests
		FROM %s GROUP BY location, workload, replica`, q.Table("tokens_sample")), &toks)
	if err != nil {
		return err
	}
	for _, t := range toks {
		s.tokens[tokensKey{t.Location, t.Workload, t.Replica}] = tokensLast{time.UnixMilli(t.AtMS).UTC(), t.Prompt, t.Gen, t.Requests}
	}
	return nil
}

// queryRows runs a query and decodes its JSONEachRow output into the slice at into.
func queryRows[T any](ctx context.Context, q querier, query string, into *[]T) error {
	out, err := q.Query(ctx, query)
	if err != nil {
		return fmt.Errorf("reading series state: %w", err)
	}
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(line, &v); err != nil {
			return fmt.Errorf("reading series state: %w", err)
		}
		*into = append(*into, v)
	}
	return nil
}
