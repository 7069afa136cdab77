package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/placement"
)

// newStatusCmd is `arbiter status`: what the arbiter intends per workload, location and market,
// what it costs, and the actions in flight or waiting for approval, from the placement bucket.
func newStatusCmd(g *cli.Globals) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "status",
		Short:   "Show workloads, replicas per location and market, cost per hour, pending actions and approvals",
		Example: "  arbiter status\n  arbiter status -o json --nats nats://nats-1:4222",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := g.Logger(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 15*time.Second)
			defer cancel()
			nc, js, err := g.Dial(ctx, "", bus.RoleArbiter, "arbiter-status", log)
			if err != nil {
				return err
			}
			defer nc.Close()
			books, err := arbiter.LoadBooks(ctx, js, bus.BucketPlacement)
			if err != nil {
				return err
			}
			if len(books) == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), noBooksHint)
			}
			return cli.Write(cmd.OutOrStdout(), output, statusColumns, statusRows(books))
		},
	}
	cli.OutputFlag(cmd, &output, cli.Formats...)
	return cmd
}

// noBooksHint says why status has no rows: nothing has been placed.
const noBooksHint = "note: no workload is placed: the placement bucket is empty. The arbiter places the workloads " +
	"of its fleet file, so start it with one (arbiter run --config bursar.yaml; examples/demo/bursar.yaml runs anywhere); " +
	"an arbiter started without --config places nothing"

var statusColumns = []string{"workload", "location", "market", "replicas", "ready", "launching", "reclaimed",
	"draining", "usd_per_hour", "pending", "awaiting_approval"}

// statusRows has one row per workload, location and market, with the workload's pending actions
// and approvals on each of its rows' group.
func statusRows(books map[string]*arbiter.Book) []cli.Row {
	var rows []cli.Row
	for _, w := range sortedNames(books) {
		b := books[w]
		idx := map[[2]string]cli.Row{}
		var order [][2]string
		row := func(loc, market string) cli.Row {
			k := [2]string{loc, market}
			r, ok := idx[k]
			if !ok {
				r = cli.Row{"workload": w, "location": loc, "market": market, "replicas": 0, "ready": 0, "launching": 0,
					"reclaimed": 0, "draining": 0, "usd_per_hour": 0.0, "pending": 0, "awaiting_approval": 0}
				idx[k] = r
				order = append(order, k)
			}
			return r
		}
		for _, rep := range b.Replicas {
			r := row(rep.Location, string(rep.Market))
			inc(r, stateColumn(rep.State))
			if rep.State != placement.StateDraining {
				inc(r, "replicas")
			}
			r["usd_per_hour"] = r["usd_per_hour"].(float64) + rep.PricePerHour
		}
		for _, a := range b.Actions {
			r := row(a.Target.Location, string(a.Target.Market))
			if a.Stage == arbiter.StageAwaiting {
				inc(r, "awaiting_approval")
			} else {
				inc(r, "pending")
			}
		}
		for _, k := range order {
			rows = append(rows, idx[k])
		}
	}
	return rows
}

func stateColumn(s placement.ReplicaState) string {
	switch s {
	case placement.StateReady, placement.StateLaunching, placement.StateReclaimed, placement.StateDraining:
		return string(s)
	}
	return "launching"
}

func inc(r cli.Row, col string) { r[col] = r[col].(int) + 1 }

func sortedNames(books map[string]*arbiter.Book) []string {
	names := make([]string, 0, len(books))
	for n := range books {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
