package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/report"
)

// newBudgetCmd is `report budget`: each policy's spend and forecast against its limit.
func newBudgetCmd(g *cli.Globals) *cobra.Command {
	var file, fleetFile, output string
	cmd := &cobra.Command{
		Use:   "budget",
		Short: "Spend, burn rate and forecast against each budget policy",
		Long: `budget measures every budget policy's current period the way the arbiter does. Policies come
from the budgets bucket in NATS KV (set with arbiter budget set), or from a policy file with -f.`,
		Example: `  report budget
  report budget -f budgets/llm.yaml --fleet bursar.yaml -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runOnPolicies(cmd, g, file, fleetFile, output, "budget", report.Options{Now: time.Now().UTC()})
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "read policies from this YAML file instead of NATS KV")
	cmd.Flags().StringVar(&fleetFile, "fleet", "bursar.yaml", "fleet file, for workloads' teams")
	cli.OutputFlag(cmd, &output, report.Formats...)
	return cmd
}

// runOnPolicies runs report name with opts on the budget policies (from file, else NATS KV) and
// the fleet file, and writes it in format output, its notes on standard error where the format
// is for machines.
func runOnPolicies(cmd *cobra.Command, g *cli.Globals, file, fleetFile, output, name string, opts report.Options) error {
	ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Minute)
	defer cancel()
	policies, err := loadPolicies(ctx, cmd, g, file)
	if err != nil {
		return err
	}
	if opts.Fleet, err = loadFleet(fleetFile, false); err != nil {
		return err
	}
	r, closeFn, err := open(ctx, cmd, g)
	if err != nil {
		return err
	}
	defer closeFn()
	req := report.NewRequest(name, opts)
	req.Policies = policies
	res, err := r.Run(ctx, req)
	if err != nil {
		return err
	}
	if err := report.Write(cmd.OutOrStdout(), output, res, ""); err != nil {
		return err
	}
	notesToStderr(cmd, output, res)
	return nil
}

func loadPolicies(ctx context.Context, cmd *cobra.Command, g *cli.Globals, file string) ([]budget.Policy, error) {
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("reading budget policies: %w", err)
		}
		return budget.ParseFile(file, data)
	}
	log, err := g.Logger(cmd.ErrOrStderr())
	if err != nil {
		return nil, err
	}
	nc, js, err := g.Dial(ctx, "", bus.RoleReport, "report", log)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	st, err := budget.OpenStore(ctx, js)
	if err != nil {
		return nil, err
	}
	revs, err := st.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]budget.Policy, 0, len(revs))
	for _, r := range revs {
		if !r.Deleted {
			out = append(out, r.Policy)
		}
	}
	return out, nil
}
