package jobreplay

import (
	"context"
	"math"
	"testing"
)

// TestMoveBetweenZones: a move is a relaunch and costs the overhead. g 60, d 30, C0 150. Zone 0
// has spot in ticks 0-1, zone 1 from tick 2. Tick 0: launch in zone 0 (30 + 30 work); tick 1:
// 60 (W 90), preempted at its end; tick 2: greedy moves to zone 1, relaunch (30 + 30: W 120);
// tick 3: 30 more, done at 3·60+0+30 = 210. Four spot ticks: $240.
func TestMoveBetweenZones(t *testing.T) {
	avail := [][]bool{{true, false}, {true, false}}
	for range 6 {
		avail = append(avail, []bool{false, true})
	}
	p, err := build("greedy", Env{Setting: handSetting(150, 3600, 30), Zones: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Simulate(handSetting(150, 3600, 30), avail, p)
	want := Outcome{Cost: 240, End: 210, Met: true, SpotTicks: 4, Launches: 2, Preemptions: 1}
	if err != nil || got != want {
		t.Errorf("Simulate() = %+v, %v\nwant        %+v", got, err, want)
	}
}

// TestEvaluateZones: zones a and b each have spot for 5 of the job's 10 h (a first, b next).
// Alone, greedy takes 5 h of spot and must run the other 5 h on-demand: 5·0.9731 + 5·3.06 =
// $20.1655 in either zone; with both, 10 h of spot: $9.731, 51.7 % less than the best single zone
// (a: the first in name order among equals).
func TestEvaluateZones(t *testing.T) {
	const ticks = 93 // WindowLen(3600): one window, starting at 0
	mk := func(name string, from, to int) Market {
		m := Market{Name: name, Zones: []string{name}, Tick: 3600}
		for k := range ticks {
			m.Avail = append(m.Avail, []bool{k >= from && k < to})
		}
		return m
	}
	ms := []Market{mk("a", 0, 5), mk("b", 5, 10)}
	job := Job{Work: 10 * 3600, Deadline: 40 * 3600, SpotPrice: RefSpotPrice, ODPrice: RefODPrice}
	res, err := EvaluateZones(context.Background(), job, "two", ms, 30, []string{"greedy"})
	if err != nil {
		t.Fatal(err)
	}
	r := res[0]
	single, multi := 5*RefSpotPrice+5*RefODPrice, 10*RefSpotPrice
	if r.Windows != 1 || r.BestZone != "a" || math.Abs(r.BestZoneCost-single) > 1e-9 || math.Abs(r.MeanCost-multi) > 1e-9 ||
		math.Abs(r.SavingPct-100*(single-multi)/single) > 1e-9 {
		t.Errorf("EvaluateZones() = %+v, want 1 window, best zone a at $%.4f, both zones $%.4f", r, single, multi)
	}
}

// TestJoin: zones on different ticks cannot be one market; the joined market is cut to the
// shortest zone.
func TestJoin(t *testing.T) {
	a := Market{Name: "a", Zones: []string{"a"}, Tick: 60, Avail: [][]bool{{true}, {false}, {true}}}
	b := Market{Name: "b", Zones: []string{"b"}, Tick: 60, Avail: [][]bool{{false}, {true}}}
	m, err := Join("ab", []Market{a, b})
	if err != nil || m.Len() != 2 || len(m.Zones) != 2 || m.Avail[0][0] != true || m.Avail[1][1] != true {
		t.Errorf("Join() = %+v, %v", m, err)
	}
	b.Tick = 30
	if _, err := Join("ab", []Market{a, b}); err == nil {
		t.Error("Join() of 60 s and 30 s zones: no error")
	}
}
