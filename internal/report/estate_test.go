package report

import (
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/report/reporttest"
	"github.com/bursar-dev/bursar/internal/store/storetest"
)

// TestHistoryReportsOnAnEstate runs the console's history reports on a small estate: the fleet
// has a row per series, every reclaim plan finds its notice, every cheaper_offer plan onto spot
// (whose price moves hourly) finds the price change and none onto on-demand (whose price never
// moves) does, and holds agree with decisions on which plans needed approval.
func TestHistoryReportsOnAnEstate(t *testing.T) {
	st := storetest.New(t)
	end := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	cfg, end := reporttest.Estate{Series: 80, Days: 2, GPUs: 16, Jobs: 4, End: end}.Fill(ctxT(t), t, st)
	o := Options{Window: Window{Since: end.Add(-24 * time.Hour), Until: end}, Now: end, Fleet: cfg}
	fl, err := Fleet(ctxT(t), st, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(fl.Rows) != 80 {
		t.Errorf("fleet: %d rows, want one per series (80)", len(fl.Rows))
	}
	for _, r := range fl.Rows {
		if r["usd_per_m_tokens"] == nil || r["capacity_per_s"] == nil || r["demand_per_s"] == nil {
			t.Errorf("fleet row without its figures: %v", r)
			break
		}
	}
	dec, err := Decisions(ctxT(t), st, o, "")
	if err != nil {
		t.Fatal(err)
	}
	held := 0
	for _, r := range dec.Rows {
		reason, kind, detail := r["reasons"].(string), r["cause_kind"].(string), r["cause_detail"].(string)
		onSpot := strings.Contains(r["actions_detail"].(ActionDetails)[0].Offer, "/spot")
		want := map[string]string{"reclaim": "capacity_reclaimed", "budget": ""}[reason]
		if reason == "cheaper_offer" && onSpot {
			want = "price_observed"
		}
		if reason != "demand_up" && reason != "demand_down" && kind != want {
			t.Errorf("plan %s (%s, spot %v): cause %q (%s), want %q", r["plan_id"], reason, onSpot, kind, detail, want)
		}
		if r["needs_approval"] == true {
			held++
		}
	}
	if len(dec.Rows) != 80*2 {
		t.Errorf("decisions: %d plans, want 160 (80 series, 2 a day)", len(dec.Rows))
	}
	hs, err := Holds(ctxT(t), st, o, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(hs.Rows) != held || held == 0 {
		t.Errorf("holds: %d, decisions needing approval: %d", len(hs.Rows), held)
	}
}
