package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/placement"
)

// statusTimeout bounds connecting, and each read of the books.
const statusTimeout = 15 * time.Second

// newStatusCmd is `arbiter status`: what the arbiter intends per workload, location and market,
// what it costs, and the actions in flight or waiting for approval, from the placement bucket.
func newStatusCmd(g *cli.Globals) *cobra.Command {
	var output string
	var watch bool
	var every time.Duration
	cmd := &cobra.Command{
		Use:     "status",
		Short:   "Show workloads, replicas per location and market, cost per hour, pending actions and approvals",
		Example: "  arbiter status\n  arbiter status -o wide --watch\n  arbiter status -o json --nats nats://nats-1:4222",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if watch && every <= 0 {
				return fmt.Errorf("--interval %s: want a positive duration, such as 5s", every)
			}
			log, err := g.Logger(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), statusTimeout)
			nc, js, err := g.Dial(ctx, "", bus.RoleArbiter, "arbiter-status", log)
			cancel()
			if err != nil {
				return err
			}
			defer nc.Close()
			s := statusPrinter{js: js, format: output, out: cmd.OutOrStdout(), errOut: cmd.ErrOrStderr()}
			if !watch {
				return s.print(cmd.Context())
			}
			return s.watch(cmd.Context(), every, cli.IsTerminal(s.out), time.Now)
		},
	}
	cli.OutputFlag(cmd, &output, append(slices.Clone(cli.Formats), "wide")...)
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "read and print again every --interval until interrupted")
	cmd.Flags().DurationVar(&every, "interval", 5*time.Second, "how often --watch reads again")
	return cmd
}

// noBooksHint says why status has no rows: nothing has been placed.
const noBooksHint = "note: no workload is placed: the placement bucket is empty. The arbiter places the workloads " +
	"of its fleet file, so start it with one (arbiter run --config bursar.yaml; examples/demo/bursar.yaml runs anywhere); " +
	"an arbiter started without --config places nothing"

var statusColumns = []string{"workload", "location", "market", "replicas", "ready", "launching", "reclaimed",
	"draining", "usd_per_hour", "pending", "awaiting_approval"}

// wideColumns adds, for -o wide, the instance types a group runs or is about to, their GPU, the
// reasons of its pending actions and the deadline of the approval its held actions wait for.
var wideColumns = append(slices.Clone(statusColumns), "instance_type", "gpu", "reasons", "approval_deadline")

// statusPrinter reads the books and prints them in a format.
type statusPrinter struct {
	js          jetstream.JetStream
	format      string // one of cli.Formats, or wide
	out, errOut io.Writer
}

// print reads the books once and prints them.
func (s statusPrinter) print(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	books, err := arbiter.LoadBooks(ctx, s.js, bus.BucketPlacement)
	if err != nil {
		return err
	}
	if len(books) == 0 {
		fmt.Fprintln(s.errOut, noBooksHint)
	}
	rows := statusRows(books)
	if s.format != "wide" {
		return cli.Write(s.out, s.format, statusColumns, rows)
	}
	addWide(rows, books, s.gpus(ctx, books))
	return cli.Write(s.out, "table", wideColumns, rows)
}

// watch prints every interval until ctx ends. A table on a terminal is cleared and printed
// again under a line saying when it was read; anything else is printed as one block per read,
// blocks apart by a blank line, so a pipe or file keeps every read. A read that fails is said
// and the next one tried.
func (s statusPrinter) watch(ctx context.Context, every time.Duration, terminal bool, now func() time.Time) error {
	redraw := terminal && (s.format == "table" || s.format == "wide")
	t := time.NewTicker(every)
	defer t.Stop()
	for first := true; ; first = false {
		switch {
		case redraw:
			fmt.Fprintf(s.out, "\x1b[H\x1b[2JEvery %s: arbiter status    %s\n\n", every, now().Format(time.TimeOnly))
		case !first:
			fmt.Fprintln(s.out)
		}
		if err := s.print(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			fmt.Fprintf(s.errOut, "arbiter status: %v (trying again in %s)\n", err, every)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// gpus reads the GPU model of each instance type the books' workloads run, from the latest
// replica.state of each workload and location (the FLEET stream): the books name offers only.
// What cannot be read is left out, and its cells stay empty.
func (s statusPrinter) gpus(ctx context.Context, books map[string]*arbiter.Book) map[string]string {
	out := map[string]string{}
	stream, err := s.js.Stream(ctx, bus.Fleet)
	if err != nil {
		fmt.Fprintf(s.errOut, "note: GPU models unknown: reading stream %s: %v\n", bus.Fleet, err)
		return out
	}
	seen := map[string]bool{}
	for _, w := range sortedNames(books) {
		for _, r := range books[w].Replicas {
			subject := (&events.ReplicaState{Workload: w, Location: r.Location}).Subject()
			if seen[subject] {
				continue
			}
			seen[subject] = true
			m, err := stream.GetLastMsgForSubject(ctx, subject)
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				continue
			} else if err != nil {
				fmt.Fprintf(s.errOut, "note: GPU model of %s at %s unknown: %v\n", w, r.Location, err)
				continue
			}
			e, err := events.Decode(m.Data)
			if rs, ok := e.(*events.ReplicaState); err == nil && ok && rs.GPUModel != "" {
				out[instanceType(rs.Offer)] = rs.GPUModel
			}
		}
	}
	return out
}

// addWide fills the wide columns of rows (statusRows of books); gpus maps instance types to
// their GPU model.
func addWide(rows []cli.Row, books map[string]*arbiter.Book, gpus map[string]string) {
	for _, r := range rows {
		b := books[r["workload"].(string)]
		loc, market := r["location"].(string), r["market"].(string)
		var types, models, reasons []string
		var deadline time.Time
		add := func(list []string, v string) []string {
			if v == "" || slices.Contains(list, v) {
				return list
			}
			return append(list, v)
		}
		for _, rep := range b.Replicas {
			if rep.Location == loc && string(rep.Market) == market {
				types = add(types, instanceType(rep.Offer))
			}
		}
		for _, a := range b.Actions {
			if a.Target.Location != loc || string(a.Target.Market) != market {
				continue
			}
			types, reasons = add(types, instanceType(a.Target.Offer)), add(reasons, a.Target.Reason)
			if d := holdDeadline(b, a.Hold); a.Stage == arbiter.StageAwaiting && !d.IsZero() && (deadline.IsZero() || d.Before(deadline)) {
				deadline = d
			}
		}
		for _, t := range types {
			models = add(models, gpus[t])
		}
		r["instance_type"], r["gpu"], r["reasons"] = strings.Join(types, ","), strings.Join(models, ","), strings.Join(reasons, ",")
		r["approval_deadline"] = ""
		if !deadline.IsZero() {
			r["approval_deadline"] = deadline.UTC().Format(time.RFC3339)
		}
	}
}

// holdDeadline is when hold id of b times out; zero when b holds no such hold or it has none.
func holdDeadline(b *arbiter.Book, id string) time.Time {
	if i := slices.IndexFunc(b.Holds, func(h arbiter.Hold) bool { return h.ID == id }); id != "" && i >= 0 {
		return b.Holds[i].Deadline
	}
	return time.Time{}
}

// instanceType is the instance type part of an offer id (location/zone/type/market), or the id
// itself when it is not one.
func instanceType(offer string) string {
	if parts := strings.Split(offer, "/"); len(parts) == 4 {
		return parts[2]
	}
	return offer
}

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
