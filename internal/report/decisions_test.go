package report

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/store"
	"github.com/bursar-dev/bursar/internal/store/storetest"
)

// planRow is one plan.decided row: actions as "id kind location offer market delta reason
// needs_approval" strings, space separated.
func planRow(id, when, workload string, before, after float64, needs bool, actions ...string) []any {
	var tuples []string
	for _, a := range actions {
		f := strings.Fields(a)
		tuples = append(tuples, fmt.Sprintf("('%s','%s','%s','%s','%s',0,%s,'%s',%s)", f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]))
	}
	return []any{"pd-" + id, at(when), "1", workload, id, "[" + strings.Join(tuples, ",") + "]", before, after, needs}
}

// stepRow is one action.updated row.
func stepRow(n int, when, workload, plan, action, status, kind, location, offer, reason, actor, detail string) []any {
	return []any{fmt.Sprintf("au%d", n), at(when), "1", workload, action, plan, status, kind, location, offer, "spot", 1, reason, actor, detail}
}

// decisionHistory is a morning of plans, worked by hand in TestDecisions:
//
//	08:00 p0 chat demand_up, before the window.
//	10:00 p1 chat reclaim: retire at aws-use1 (applied), launch at gcp-usc1 (applied, then
//	  given up at 10:20). The notice at aws-use1 at 09:55 caused it (09:40 is too early, 09:58
//	  is at another location).
//	10:30 p5 chat demand_down: no tokens around it, so no cause.
//	11:00 p2 chat cheaper_offer: launch 2 on aws-usw2 on-demand, drain 2 at aws-use1; the
//	  price of the usw2 offer fell from $98 to $90 at 10:45 (it fell again at 11:10, after).
//	11:30 p3 chat demand_up, held: awaiting approval, then rejected by the timeout at 11:45;
//	  tokens: 200 tokens/s 11:20-11:25, 2000 tokens/s 11:25-11:30.
//	11:50 p4 batch budget: no event is linked to a budget; still awaiting approval.
func decisionHistory(t *testing.T) *store.Store {
	st := storetest.New(t)
	seed(t, st, "plan_decided", "id, at, version, workload, plan_id, actions, usd_per_hour_before, usd_per_hour_after, needs_approval",
		planRow("p0", "08:00", "chat", 0, 4, false, "a0 launch aws-use1 "+awsSpot+" spot 1 demand_up false"),
		planRow("p1", "10:00", "chat", 8, 9, false, "a1 retire aws-use1 "+awsSpot+" spot -1 reclaim false",
			"a2 launch gcp-usc1 "+chatGCP+" spot 1 reclaim false"),
		planRow("p5", "10:30", "chat", 9, 5, false, "a5 drain aws-use1 "+awsSpot+" spot -1 demand_down false"),
		planRow("p2", "11:00", "chat", 10, 7, false, "a3 launch aws-usw2 "+chatUSW2+" on_demand 2 cheaper_offer false",
			"a4 drain aws-use1 "+awsSpot+" spot -2 cheaper_offer false"),
		planRow("p3", "11:30", "chat", 7, 11, true, "a6 launch aws-use1 "+awsSpot+" spot 1 demand_up true"),
		planRow("p4", "11:50", "batch", 6, 2, true, "a7 drain aws-use1 "+batchSpotB+" spot -2 budget true"),
		planRow("p2", "11:00", "chat", 10, 7, false, "a3 launch aws-usw2 "+chatUSW2+" on_demand 2 cheaper_offer false",
			"a4 drain aws-use1 "+awsSpot+" spot -2 cheaper_offer false"), // redelivered
	)
	seed(t, st, "action_updated", "id, at, version, workload, action_id, plan_id, status, kind, location, offer, market, "+
		"replicas, reason, actor, detail",
		stepRow(1, "10:00", "chat", "p1", "a1", "applied", "retire", "aws-use1", awsSpot, "reclaim", "arbiter/a", ""),
		stepRow(2, "10:00", "chat", "p1", "a2", "proposed", "launch", "gcp-usc1", chatGCP, "reclaim", "arbiter/a", ""),
		stepRow(3, "10:01", "chat", "p1", "a2", "applied", "launch", "gcp-usc1", chatGCP, "reclaim", "arbiter/a", ""),
		stepRow(4, "10:20", "chat", "px", "g1", "applied", "retire", "gcp-usc1", chatGCP, "launch_failed", "arbiter/a", "replica r9 got no capacity"),
		stepRow(5, "10:30", "chat", "p5", "a5", "applied", "drain", "aws-use1", awsSpot, "demand_down", "arbiter/a", ""),
		stepRow(6, "11:00", "chat", "p2", "a3", "applied", "launch", "aws-usw2", chatUSW2, "cheaper_offer", "arbiter/a", ""),
		stepRow(7, "11:00", "chat", "p2", "a4", "applied", "drain", "aws-use1", awsSpot, "cheaper_offer", "arbiter/a", ""),
		stepRow(8, "11:30", "chat", "p3", "a6", "awaiting_approval", "launch", "aws-use1", awsSpot, "demand_up", "bursar", "over budget"),
		stepRow(9, "11:45", "chat", "p3", "a6", "rejected", "launch", "aws-use1", awsSpot, "demand_up", "timeout", ""),
		stepRow(10, "11:50", "batch", "p4", "a7", "awaiting_approval", "drain", "aws-use1", batchSpotB, "budget", "bursar", ""),
		stepRow(1, "10:00", "chat", "p1", "a1", "applied", "retire", "aws-use1", awsSpot, "reclaim", "arbiter/a", ""), // redelivered
	)
	seed(t, st, "capacity_reclaimed", "id, at, version, provider, region, location, zone, instance, node, kind, notice_at, deadline, source",
		[]any{"c0", at("09:40"), "1", "aws", "us-east-1", "aws-use1", "us-east-1a", "i-0", "n0", "interruption", at("09:40"), at("09:42"), "imds"},
		[]any{"c1", at("09:55"), "1", "aws", "us-east-1", "aws-use1", "us-east-1a", "i-1", "n1", "interruption", at("09:55"), at("09:57"), "imds"},
		[]any{"c2", at("09:58"), "1", "aws", "us-west-2", "aws-usw2", "", "i-2", "n2", "interruption", at("09:58"), at("10:00"), "imds"},
	)
	price := func(id, when string, usd float64) []any {
		return []any{id, at(when), "1", "aws", "us-west-2", "", "p5.48xlarge", "H100-80GB", 8, 80, "on_demand", usd, "aws"}
	}
	seed(t, st, "price_observed", "id, at, version, provider, region, zone, instance_type, gpu_model, gpu_count, "+
		"gpu_memory_gb, market, usd_per_hour, source",
		price("pa", "10:00", 98), price("pb", "10:30", 98), price("pc", "10:45", 90), price("pd", "11:10", 80),
		[]any{"pe", at("10:50"), "1", "aws", "us-east-1", "", "p5.48xlarge", "H100-80GB", 8, 80, "on_demand", 50, "aws"}, // another region
	)
	seedTokens(t, st,
		tokenSample{"11:20", "chat", "aws-use1", "r1", 0, 0, 0, false},
		tokenSample{"11:22", "chat", "aws-use1", "r1", 60_000, 0, 10, false},
		tokenSample{"11:26", "chat", "aws-use1", "r1", 360_000, 0, 20, false},
		tokenSample{"11:28", "chat", "aws-use1", "r1", 560_000, 100_000, 30, false},
	)
	return st
}

func TestDecisions(t *testing.T) {
	st := decisionHistory(t)
	o := opts("09:00", "12:00")
	o.Fleet = testFleet()
	res, err := Decisions(ctxT(t), st, o, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"2026-11-30T11:50:00Z p4 batch budget usd_per_hour_change=-4 outcome=awaiting_approval cause=/ " +
			"detail=no event is linked to reasons budget",
		"2026-11-30T11:30:00Z p3 chat demand_up usd_per_hour_change=4 outcome=rejected cause=tokens_sample/ " +
			"detail=chat: 2000 tokens/s in the 5m0s before, 200 tokens/s in the 5m0s before that",
		"2026-11-30T11:00:00Z p2 chat cheaper_offer usd_per_hour_change=-3 outcome=applied cause=price_observed/pc " +
			"detail=aws-usw2/-/p5.48xlarge/on_demand: $98/h to $90/h (aws us-west-2, aws)",
		"2026-11-30T10:30:00Z p5 chat demand_down usd_per_hour_change=-4 outcome=applied cause=/ " +
			"detail=no tokens_sample of chat in the 10m0s before",
		"2026-11-30T10:00:00Z p1 chat reclaim usd_per_hour_change=1 outcome=1 applied, 1 launch_failed cause=capacity_reclaimed/c1 " +
			"detail=interruption of instance i-1 at aws-use1",
	}
	var got []string
	for _, r := range res.Rows {
		got = append(got, fmt.Sprintf("%s %s %s %s usd_per_hour_change=%v outcome=%s cause=%s/%s detail=%s", r["at"], r["plan_id"],
			r["workload"], r["reasons"], r["usd_per_hour_change"], r["outcome"], r["cause_kind"], r["cause_id"], r["cause_detail"]))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d := fmt.Sprint(res.Rows[4]["actions_detail"]); d != "retire aws-use1 -1 applied; launch gcp-usc1 +1 launch_failed" {
		t.Errorf("p1's actions: %s", d)
	}
	if res.Rows[1]["cause_at"] != "2026-11-30T11:28:00Z" || res.Rows[4]["cause_at"] != "2026-11-30T09:55:00Z" {
		t.Errorf("cause times %v, %v", res.Rows[1]["cause_at"], res.Rows[4]["cause_at"])
	}
}

// TestDecisionsOverNATS: decisions, with its list of actions, comes back from the store's owner as
// run here, and prints the same in every format.
func TestDecisionsOverNATS(t *testing.T) {
	st := decisionHistory(t)
	c, _ := serve(t, st)
	req := NewRequest("decisions", opts("09:00", "12:00"))
	direct, err := Local{st}.Run(ctxT(t), req)
	if err != nil {
		t.Fatal(err)
	}
	remote, err := c.Run(ctxT(t), req)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(remote, direct) {
		t.Errorf("over NATS\n%#v\ndirect\n%#v", remote, direct)
	}
	for _, format := range Formats {
		var a, b bytes.Buffer
		if err := Write(&a, format, remote, ""); err != nil {
			t.Fatal(err)
		}
		_ = Write(&b, format, direct, "")
		if a.String() != b.String() {
			t.Errorf("-o %s over NATS\n%s\ndirect\n%s", format, a.String(), b.String())
		}
	}
	var js bytes.Buffer
	_ = Write(&js, "json", direct, "")
	if !strings.Contains(js.String(), `"actions_detail": [`) {
		t.Errorf("actions_detail is not a JSON list:\n%s", js.String())
	}
}

func TestDecisionsFilters(t *testing.T) {
	st := decisionHistory(t)
	tests := []struct {
		name   string
		filter Filter
		plan   string
		want   string
	}{
		{"workload", Filter{Workload: {"batch"}}, "", "p4"},
		{"location", Filter{Location: {"aws-usw2", "gcp-usc1"}}, "", "p2 p1"},
		{"market", Filter{Market: {"on_demand"}}, "", "p2"},
		{"provider through the fleet", Filter{Provider: {"gcp"}}, "", "p1"},
		{"one plan", nil, "p3", "p3"},
		{"a plan of another workload", Filter{Workload: {"batch"}}, "p3", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := opts("09:00", "12:00")
			o.Filter = tt.filter
			res, err := Decisions(ctxT(t), st, o, tt.plan)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, r := range res.Rows {
				ids = append(ids, r["plan_id"].(string))
			}
			if got := strings.Join(ids, " "); got != tt.want {
				t.Errorf("plans %q, want %q", got, tt.want)
			}
		})
	}
}

func TestHolds(t *testing.T) {
	st := decisionHistory(t)
	seed(t, st, "plan_decided", "id, at, version, workload, plan_id, actions, usd_per_hour_before, usd_per_hour_after, needs_approval",
		planRow("p6", "09:10", "chat", 4, 6, true, "a8 launch aws-use1 "+awsSpot+" spot 1 demand_up true"),
		planRow("p7", "09:20", "chat", 6, 8, true, "a9 launch aws-use1 "+awsSpot+" spot 1 demand_up true"))
	seed(t, st, "action_updated", "id, at, version, workload, action_id, plan_id, status, kind, location, offer, market, "+
		"replicas, reason, actor, detail",
		stepRow(20, "09:10", "chat", "p6", "a8", "awaiting_approval", "launch", "aws-use1", awsSpot, "demand_up", "bursar", "over budget"),
		stepRow(21, "09:14", "chat", "p6", "a8", "approved", "launch", "aws-use1", awsSpot, "demand_up", "U123", ""),
		stepRow(22, "09:14", "chat", "p6", "a8", "applied", "launch", "aws-use1", awsSpot, "demand_up", "arbiter/a", ""),
		stepRow(23, "09:20", "chat", "p7", "a9", "awaiting_approval", "launch", "aws-use1", awsSpot, "demand_up", "bursar", ""),
		stepRow(24, "09:25", "chat", "p7", "a9", "rejected", "launch", "aws-use1", awsSpot, "demand_up", "U456", ""))
	res, err := Holds(ctxT(t), st, opts("09:00", "12:00"), "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"p4 batch pending actor= decided_at= held_at=2026-11-30T11:50:00Z usd_per_hour_change=-4",
		"p3 chat timed_out actor=timeout decided_at=2026-11-30T11:45:00Z held_at=2026-11-30T11:30:00Z usd_per_hour_change=4",
		"p7 chat rejected actor=U456 decided_at=2026-11-30T09:25:00Z held_at=2026-11-30T09:20:00Z usd_per_hour_change=2",
		"p6 chat approved actor=U123 decided_at=2026-11-30T09:14:00Z held_at=2026-11-30T09:10:00Z usd_per_hour_change=2",
	}
	var got []string
	for _, r := range res.Rows {
		got = append(got, fmt.Sprintf("%s %s %s actor=%s decided_at=%s held_at=%s usd_per_hour_change=%v", r["plan_id"], r["workload"],
			r["status"], r["actor"], r["decided_at"], r["held_at"], r["usd_per_hour_change"]))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "approvers") {
		t.Errorf("notes %q: want one saying approvers are not recorded", res.Notes)
	}
	// The holds' figures are the decisions' own.
	dec, err := Decisions(ctxT(t), st, opts("09:00", "12:00"), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.Rows {
		for _, d := range dec.Rows {
			if d["plan_id"] == h["plan_id"] && (d["usd_per_hour_before"] != h["usd_per_hour_before"] || d["usd_per_hour_after"] != h["usd_per_hour_after"]) {
				t.Errorf("plan %s: holds %v -> %v, decisions %v -> %v", h["plan_id"], h["usd_per_hour_before"], h["usd_per_hour_after"],
					d["usd_per_hour_before"], d["usd_per_hour_after"])
			}
		}
	}
}
