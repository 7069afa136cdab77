package costseries

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/replay"
)

// sharedData is the shared data folder as seen from this package.
var sharedData = filepath.Join("..", "..", DefaultData)

// replayOrSkip runs the replays of o, or skips where the shared traces are absent.
func replayOrSkip(t testing.TB, o Options) []Series {
	t.Helper()
	o.Data = sharedData
	ss, err := Replay(context.Background(), o)
	if errors.Is(err, ErrNoData) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

func TestReplayWithoutDataSaysSo(t *testing.T) {
	_, err := Replay(context.Background(), Options{Data: filepath.Join(t.TempDir(), "nothing")})
	if !errors.Is(err, ErrNoData) {
		t.Fatalf("err = %v, want ErrNoData", err)
	}
}

func TestReplayIsDeterministic(t *testing.T) {
	o := Options{ReplicaTraces: []string{"AWS1"}, ReplicaPolicies: []string{"spothedge"}}
	a, b := replayOrSkip(t, o), replayOrSkip(t, o)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two replays of the same inputs gave different series")
	}
}

// TestReplicaSpendMatchesTheReplay checks the series against the replay's own cost figure: the
// dollars over the scored ticks, in spot units, are the cost the replay reports for the window.
func TestReplicaSpendMatchesTheReplay(t *testing.T) {
	ss := replayOrSkip(t, Options{ReplicaTraces: []string{"AWS2"}, ReplicaPolicies: []string{"spothedge"}})
	if len(ss) == 0 {
		t.Fatal("no series")
	}
	tr, err := replay.LoadTrace(os.DirFS(filepath.Join(sharedData, "traces", "skyserve")), "AWS2", replay.LoadOptions{TickSeconds: 30})
	if err != nil {
		t.Fatal(err)
	}
	o := replay.DefaultOptions()
	o.Window, o.Offsets = time.Duration(tr.Len-1)*replicaTick, []int{0}
	cfg, err := o.Config()
	if err != nil {
		t.Fatal(err)
	}
	specs, _ := replay.ParsePolicies("spothedge")
	res, err := replay.Evaluate(context.Background(), tr, cfg, specs)
	if err != nil {
		t.Fatal(err)
	}
	r := cfg.Rules
	scored := float64(r.Window - r.ColdStart)
	wantUnits := res[0].CostPct / 100 * float64(r.Target) * r.ODRatio * scored
	gotUnits := 0.0
	for i := range ss {
		gotUnits += ss[i].SpendUSD() / (replicaOnDemandUSD / r.ODRatio) * (3600 / replicaTick.Seconds())
	}
	// The series cover every whole step (the replay's first D ticks in, the last partial step
	// out): a few ticks' cost apart, far under 0.5 %.
	if math.Abs(gotUnits-wantUnits) > 0.005*wantUnits {
		t.Fatalf("series spend %.0f spot units, the replay's cost %.0f", gotUnits, wantUnits)
	}
	for _, s := range ss {
		if s.Len() != (r.Window)/10 || s.Tokens != nil || s.Key.GPUType != "V100" {
			t.Fatalf("series %s: %d steps, tokens %v", s.Key, s.Len(), s.Tokens != nil)
		}
	}
}

// TestServingSeriesCoverTwoWeeks checks the serving series: whole ServeGen traces at 5-minute
// steps, tokens known, and the served tokens summing to what the replay serves.
func TestServingSeriesCoverTwoWeeks(t *testing.T) {
	ss := replayOrSkip(t, Options{ServingPolicies: []string{"od-autoscale"}})
	if len(ss) != 2 {
		t.Fatalf("od-autoscale holds one source per trace, got %d series", len(ss))
	}
	for _, s := range ss {
		if s.Key.Market != OnDemand || s.Weeks() != 2 || len(s.Tokens) != s.Len() {
			t.Fatalf("series %s: market %s, %.2f weeks, %d tokens for %d steps", s.Key, s.Key.Market, s.Weeks(), len(s.Tokens), s.Len())
		}
		var tokens float64
		for _, v := range s.Tokens {
			tokens += v
		}
		if tokens <= 0 || s.SpendUSD() <= 0 {
			t.Fatalf("series %s served %g tokens for $%g", s.Key, tokens, s.SpendUSD())
		}
	}
}

// TestRecordedSeriesEqualTheReplays checks that the series read back from the history are the
// replays' own, summed in process (run.series over run.held, kept as this test's reference):
// one replica window and one serving trace under the planner, which runs two offers in one
// location and market.
func TestRecordedSeriesEqualTheReplays(t *testing.T) {
	o := Options{Data: sharedData, ReplicaTraces: []string{"AWS1"}, ReplicaPolicies: []string{"spothedge"},
		ServingPolicies: []string{"bursar-direct"}} // two on-demand offers share a zone
	ctx := context.Background()
	runs, err := replays(ctx, o)
	if errors.Is(err, ErrNoData) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	runs = runs[:2] // AWS1 and the first ServeGen trace: enough, and quicker
	var want []Series
	for _, r := range runs {
		ss, err := r.series(r.held())
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, ss...)
	}
	got, err := record(ctx, runs)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 || len(got) != len(want) {
		t.Fatalf("%d series read back, %d replayed", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Key != w.Key || !g.Start.Equal(w.Start) || !near(g.USDPerHour, w.USDPerHour) || !near(g.GPUs, w.GPUs) || !near(g.Tokens, w.Tokens) {
			t.Errorf("series %s read back differs from the replay's (key %s, %d steps for %d)", w.Key, g.Key, g.Len(), w.Len())
		}
	}
}
