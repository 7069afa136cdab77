package serving

import (
	"fmt"
	"io"
	"slices"
)

// Capacity is a spot-capacity trace on the one-minute tick: how many GPUs of one type the
// service could get in each zone during each minute.
type Capacity struct {
	Name string
	// Type is the GPU model the trace measured.
	Type  string
	Zones []string
	// GPUs[t][z] is zone z's capacity in GPUs during minute t.
	GPUs [][]int
}

// probeMinutes is the SkyNomad prober's round: one probe every 10 minutes.
const probeMinutes = 10

// ParseProbes reads SkyNomad's probe table (columns run_id, zone, instances_created; one row per
// round and zone, rounds in order). Each round's instances_created, single-GPU instances of
// gpuType, is the zone's capacity in GPUs for the round's 10 minutes. Rounds follow each other in
// file order: a round the prober missed is not filled in (docs/serving.md notes the one gap).
// Every round must probe the same zones as the first.
func ParseProbes(name string, r io.Reader, gpuType string) (*Capacity, error) {
	tb, err := readTable(name, r, "run_id", "zone", "instances_created")
	if err != nil {
		return nil, err
	}
	c := &Capacity{Name: name, Type: gpuType}
	var rounds [][]int
	var run string
	for i := range tb.rows {
		if id := tb.str(i, "run_id"); len(rounds) == 0 || id != run {
			if err := c.closeRound(tb, i, rounds); err != nil {
				return nil, err
			}
			run = id
			rounds = append(rounds, nil)
		}
		zone := tb.str(i, "zone")
		if zone == "" {
			return nil, tb.errf(i, "zone is empty")
		}
		z := len(rounds[len(rounds)-1])
		if len(rounds) == 1 {
			if slices.Contains(c.Zones, zone) {
				return nil, tb.errf(i, "zone %s twice in round %s", zone, run)
			}
			c.Zones = append(c.Zones, zone)
		} else if z >= len(c.Zones) || c.Zones[z] != zone {
			return nil, tb.errf(i, "round %s: zone %s out of the first round's order %v", run, zone, c.Zones)
		}
		n, err := tb.whole(i, "instances_created")
		if err != nil {
			return nil, err
		}
		rounds[len(rounds)-1] = append(rounds[len(rounds)-1], n)
	}
	if len(rounds) == 0 {
		return nil, fmt.Errorf("%s: %w: no probe rows after the header", name, ErrMalformedInput)
	}
	if err := c.closeRound(tb, len(tb.rows), rounds); err != nil {
		return nil, err
	}
	for _, round := range rounds {
		for range probeMinutes {
			c.GPUs = append(c.GPUs, round)
		}
	}
	return c, nil
}

// closeRound checks that the round before row i probed every zone.
func (c *Capacity) closeRound(tb *table, i int, rounds [][]int) error {
	if len(rounds) < 2 {
		return nil
	}
	if got := len(rounds[len(rounds)-1]); got != len(c.Zones) {
		return fmt.Errorf("%s:%d: %w: the round before this line probed %d zones, the first round %d",
			tb.name, lineOf(tb, i), ErrMalformedInput, got, len(c.Zones))
	}
	return nil
}

// lineOf is row i's line, or the line after the last row.
func lineOf(tb *table, i int) int {
	if i < len(tb.line) {
		return tb.line[i]
	}
	if len(tb.line) == 0 {
		return 2
	}
	return tb.line[len(tb.line)-1] + 1
}

// Replicas is zone z's capacity at minute t in replicas of gpus GPUs each: a replica takes gpus
// units of a trace that counts single-GPU instances.
func (c *Capacity) Replicas(t, z, gpus int) int {
	return c.GPUs[t][z] / gpus
}
