package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/events"
	fleetfile "github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/jobs"
)

// newJobCmd is "arbiter job": deadline-bound jobs, submitted to and cancelled by the arbiter over
// the bus, with the credentials "arbiter budget" uses.
func newJobCmd(g *cli.Globals) *cobra.Command {
	var o budgetOptions
	cmd := &cobra.Command{
		Use:   "job",
		Short: "Submit, list and cancel deadline-bound jobs (stored in NATS KV with their state)",
		Long: `A job is a workload of kind job: one replica that runs until its work is done, by its
deadline. The arbiter decides at every pass whether it runs on spot here or there, on on-demand,
or waits, so that the deadline holds at the least cost; a reclaim notice asks the job to
checkpoint before it moves.

submit and cancel ask the arbiter on bursar.admin.job.<user>.submit|cancel, which records
<user>, the NATS identity the server let publish there (on the embedded server: "budget"), and
stores the job in the KV bucket ` + bus.BucketJobs + `, so it survives restarts. status reads the bucket.`,
		Example: `  arbiter job submit -f finetune.yaml
  arbiter job status -o json`,
	}
	cmd.PersistentFlags().StringVar(&o.identity, "nats-identity", "", "the NATS user name your permissions allow in bursar.admin.job.<user>.>; recorded as the submitter (default: --nats-user, else "+bus.RoleBudget+")")
	cmd.AddCommand(jobSubmitCmd(g, &o), jobStatusCmd(g), jobCancelCmd(g, &o))
	return cmd
}

// jobFlags are a job given on the command line instead of a file.
type jobFlags struct {
	name, team, gpu, deadline string
	gpus, priority            int
	memory                    float64
	work, overhead, coldStart time.Duration
	markets, residency        []string
}

// workload is the job the flags describe.
func (f jobFlags) workload() (*fleetfile.Workload, error) {
	j := &fleetfile.Job{Work: f.work, Overhead: f.overhead, Priority: f.priority}
	if at, err := time.Parse(time.RFC3339, f.deadline); err == nil {
		j.DeadlineAt = at
	} else if d, derr := time.ParseDuration(f.deadline); derr == nil {
		j.DeadlineIn = d
	} else {
		return nil, fmt.Errorf("--deadline %q: want a duration from now (52h) or an RFC 3339 time (2026-12-04T06:00:00Z)", f.deadline)
	}
	w := &fleetfile.Workload{Name: f.name, Team: f.team, Kind: fleetfile.KindJob, Job: j, ColdStart: f.coldStart,
		Residency: f.residency, GPU: fleetfile.GPU{Count: f.gpus, MinMemoryGB: f.memory}}
	if f.gpu != "" {
		w.GPU.Models = strings.Split(f.gpu, ",")
	}
	for _, m := range f.markets {
		w.Markets = append(w.Markets, events.Market(m))
	}
	return w, nil
}

func jobSubmitCmd(g *cli.Globals, o *budgetOptions) *cobra.Command {
	var fl jobFlags
	var file string
	cmd := &cobra.Command{
		Use:   "submit -f job.yaml | submit --name NAME --gpu MODEL --work D --deadline D|TIME [flags]",
		Short: "Submit a job: from a file (one workload of kind job, as in bursar.yaml) or from flags",
		Example: `  arbiter job submit -f finetune.yaml
  arbiter job submit --name finetune-7b --gpu H100-80GB --work 48h --deadline 52h --overhead 3m --markets spot,on_demand`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w, err := jobToSubmit(cmd, file, fl)
			if err != nil {
				return err
			}
			return asUser(cmd, g, o, jobs.NewClient, func(ctx context.Context, c *jobs.Client) error {
				spec, err := c.Submit(ctx, *w)
				if err != nil {
					return noJobTaker(err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "job %q submitted at %s by %s; due %s\n", spec.Workload.Name,
					spec.SubmittedAt.Format(time.RFC3339), spec.By, spec.Deadline().Format(time.RFC3339))
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVarP(&file, "file", "f", "", "read the job from a YAML file ('-' for stdin) instead of flags")
	f.StringVar(&fl.name, "name", "", "the job's name (letters, digits, '-' or '_')")
	f.StringVar(&fl.team, "team", "", "the team it belongs to, for budgets and reports")
	f.StringVar(&fl.gpu, "gpu", "", "accepted GPU models, comma-separated (e.g. H100-80GB)")
	f.IntVar(&fl.gpus, "gpus", 1, "GPUs the job's replica needs")
	f.Float64Var(&fl.memory, "min-memory-gb", 0, "GPU memory per GPU at least, instead of --gpu")
	f.DurationVar(&fl.work, "work", 0, "compute the job needs on one replica (e.g. 48h)")
	f.StringVar(&fl.deadline, "deadline", "", "the deadline: a duration from submission (52h) or an RFC 3339 time")
	f.DurationVar(&fl.overhead, "overhead", 0, "time each (re)launch loses before progress resumes: loading the checkpoint")
	f.DurationVar(&fl.coldStart, "cold-start", 0, "launch to ready")
	f.IntVar(&fl.priority, "priority", 0, "jobs competing for the same capacity: higher first")
	f.StringSliceVar(&fl.markets, "markets", nil, "markets allowed: spot, on_demand, reserved (default every market)")
	f.StringSliceVar(&fl.residency, "residency", nil, "a location must carry one of these tags")
	return cmd
}

// noJobTaker says what is missing when nobody answers a job request: only an arbiter that runs
// with a fleet file plans jobs, and one started without (it answers budget writes only) or none
// at all leaves the request to time out on "no responders".
func noJobTaker(err error) error {
	if !errors.Is(err, nats.ErrNoResponders) {
		return err
	}
	return errors.New("no arbiter takes jobs: jobs are planned by an arbiter running with a fleet file " +
		"(arbiter run --config bursar.yaml); an arbiter started without one takes no jobs, and none may be running: " +
		"start one with the fleet the job runs in (and check --nats)")
}

// jobToSubmit reads the job from the file, or else from the flags, and checks what it says alone
// (the arbiter checks it against its fleet).
func jobToSubmit(cmd *cobra.Command, file string, fl jobFlags) (*fleetfile.Workload, error) {
	if file == "" {
		w, err := fl.workload()
		if err != nil {
			return nil, err
		}
		return w, fleetfile.CheckJobAlone(w)
	}
	for _, name := range []string{"name", "team", "gpu", "gpus", "min-memory-gb", "work", "deadline", "overhead", "cold-start", "priority", "markets", "residency"} {
		if cmd.Flags().Changed(name) {
			return nil, fmt.Errorf("--%s and -f both given: put the job in the file, or use flags without -f", name)
		}
	}
	var data []byte
	var err error
	if file == "-" {
		data, err = io.ReadAll(cmd.InOrStdin())
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the job: %w", err)
	}
	return fleetfile.ParseJob(data, file, nil)
}

func jobCancelCmd(g *cli.Globals, o *budgetOptions) *cobra.Command {
	return &cobra.Command{
		Use: "cancel NAME", Short: "Cancel a job: its instance is stopped and it is marked cancelled", Args: cobra.ExactArgs(1),
		Example: "  arbiter job cancel finetune-7b",
		RunE: func(cmd *cobra.Command, args []string) error {
			return asUser(cmd, g, o, jobs.NewClient, func(ctx context.Context, c *jobs.Client) error {
				if err := c.Cancel(ctx, args[0]); err != nil {
					return noJobTaker(err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "job %q cancelled\n", args[0])
				return nil
			})
		},
	}
}

func jobStatusCmd(g *cli.Globals) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use: "status [NAME]", Short: "Show jobs: state, where they run, work done, deadline, cost, preemptions", Args: cobra.MaximumNArgs(1),
		Example: "  arbiter job status\n  arbiter job status finetune-7b -o json",
		RunE: func(cmd *cobra.Command, args []string) error {
			return withNATS(cmd, g, func(ctx context.Context, _ *nats.Conn, js jetstream.JetStream) error {
				recs, err := jobs.Load(ctx, js)
				if err != nil {
					return err
				}
				var rows []cli.Row
				for _, j := range recs {
					if len(args) == 0 || j.Spec.Workload.Name == args[0] {
						rows = append(rows, jobRow(j))
					}
				}
				if len(args) == 1 && len(rows) == 0 {
					return fmt.Errorf("no job %q is submitted (arbiter job status lists them)", args[0])
				}
				return cli.Write(cmd.OutOrStdout(), output, jobColumns, rows)
			})
		},
	}
	cli.OutputFlag(cmd, &output, cli.Formats...)
	return cmd
}

var jobColumns = []string{"job", "state", "location", "market", "work_h", "done_h", "deadline", "finished_at",
	"usd_spent", "preemptions", "lost_h", "submitted_at", "by"}

func jobRow(j jobs.Record) cli.Row {
	spec, run := j.Spec, j.Run
	state := run.State
	switch {
	case spec.Cancelled && !run.Ended():
		state = events.JobCancelled
	case state == "": // no arbiter has planned it yet
		state = events.JobSubmitted
	}
	finished := ""
	if !run.FinishedAt.IsZero() {
		finished = run.FinishedAt.Format(time.RFC3339)
	}
	return cli.Row{"job": spec.Workload.Name, "state": string(state), "location": run.Location, "market": string(run.Market),
		"work_h": round2(spec.Workload.Job.Work.Hours()), "done_h": round2(run.Done.Hours()),
		"deadline": spec.Deadline().Format(time.RFC3339), "finished_at": finished, "usd_spent": round2(run.USDSpent),
		"preemptions": run.Preemptions, "lost_h": round2(run.Lost.Hours()),
		"submitted_at": spec.SubmittedAt.Format(time.RFC3339), "by": spec.By}
}

func round2(x float64) float64 { return float64(int64(x*100+0.5)) / 100 }
