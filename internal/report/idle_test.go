package report

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestIdle(t *testing.T) {
	st := history(t)
	// Two of aws-use1's H100s, sampled every 30 minutes from 09:00 to 11:30: u1 always idle, u2
	// idle at 10:00 and 10:30.
	var rows [][]any
	for i, hhmm := range []string{"09:00", "09:30", "10:00", "10:30", "11:00", "11:30"} {
		u2 := 50.0
		if hhmm == "10:00" || hhmm == "10:30" {
			u2 = 0
		}
		for j, util := range []float64{0, u2} {
			rows = append(rows, []any{fmt.Sprintf("g%d-%d", i, j), at(hhmm), "1", "aws-use1", "n1", fmt.Sprintf("u%d", j+1), j,
				"H100-80GB", util, 1 << 30, 80 << 30, 300.0, 50.0})
		}
	}
	seed(t, st, "gpu_sample", "id, at, version, location, node, uuid, `index`, model, utilization_pct, "+
		"memory_used_bytes, memory_total_bytes, power_w, temperature_c", rows...)
	tests := []struct {
		name   string
		o      IdleOptions
		want   string
		wantNo bool
	}{
		{
			// 6 GPU-hours sampled, 3 + 1 idle; aws-use1 paid $27 for 12 H100-hours.
			name: "whole window", o: IdleOptions{Options: opts("09:00", "12:00", Location, GPU), MaxGap: time.Hour},
			want: "aws-use1 H100-80GB gpu_hours_sampled=6 idle_gpu_hours=4 idle_share=0.6667 idle_usd=9",
		},
		{
			// 10:15-11:15: u1 idle 1h, u2 idle 10:15-11:00; the cost per GPU-hour in that window is
			// (2 x 4 x .25 + 2 x 5 x .75) / 4 = 2.375.
			name: "edges", o: IdleOptions{Options: opts("10:15", "11:15", Provider), MaxGap: time.Hour},
			want: "aws gpu_hours_sampled=2 idle_gpu_hours=1.75 idle_share=0.875 idle_usd=4.16",
		},
		{
			// With a 10-minute gap limit each sample speaks for 10 minutes only.
			name: "gaps", o: IdleOptions{Options: opts("09:00", "12:00", Location), MaxGap: 10 * time.Minute},
			want: "aws-use1 gpu_hours_sampled=2 idle_gpu_hours=1.333 idle_share=0.6667 idle_usd=3",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Idle(ctxT(t), st, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			g := strings.Join(got(res, "gpu_hours_sampled", "idle_gpu_hours", "idle_share", "idle_usd"), "\n")
			if g != tt.want {
				t.Errorf("got\n%s\nwant\n%s", g, tt.want)
			}
		})
	}
}
