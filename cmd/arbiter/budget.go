package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/cli"
)

type budgetOptions struct {
	output   string
	actor    string // refused: the actor is the NATS identity
	identity string
}

func newBudgetCmd(g *cli.Globals) *cobra.Command {
	var o budgetOptions
	cmd := &cobra.Command{
		Use:   "budget",
		Short: "Set and read budget policies (stored in NATS KV with their history)",
		Long: `Budget policies cap the spend of a scope (a workload, a team, a provider or a location)
over a day, week or month. Thresholds on actual or forecast spend notify, require approval for
plans that raise spend, block scale-up or scale down to the workloads' floor.

Every change is a revision in the NATS KV bucket ` + bus.BucketBudgets + `, with who made it and
when: "arbiter budget history NAME" is the audit trail. set and delete ask the arbiter, on
bursar.admin.budget.<user>.set|delete; the arbiter alone writes the bucket and records <user>, the
NATS identity the server let publish there (on the embedded server: "budget").`,
		Example: `  arbiter budget list
  arbiter budget get llm-monthly -o yaml > budgets/llm.yaml`,
	}
	f := cmd.PersistentFlags()
	f.StringVar(&o.actor, "actor", "", "refused: the history records the NATS identity that made the change")
	f.StringVar(&o.identity, "nats-identity", "", "the NATS user name your permissions allow in bursar.admin.budget.<user>.>; recorded as the actor (default: --nats-user, else "+bus.RoleBudget+")")
	cmd.AddCommand(budgetSetCmd(g, &o), budgetGetCmd(g, &o), budgetListCmd(g, &o),
		budgetHistoryCmd(g, &o), budgetDeleteCmd(g, &o))
	return cmd
}

func budgetSetCmd(g *cli.Globals, o *budgetOptions) *cobra.Command {
	var fl budget.Flags
	var file, fleetPath string
	cmd := &cobra.Command{
		Use:   "set NAME --scope KEY=VALUE --period day|week|month --limit N [flags] | set -f policy.yaml",
		Short: "Create or change a budget policy, from flags or from a YAML file",
		Example: `  arbiter budget set llm-monthly --scope workload=llm-inference --period month \
    --limit 50000 --currency USD --alert 50%,80%,100% --forecast-alert 100% \
    --on 100%:block-scale-up --on 120%:scale-to-floor \
    --approve-over 25/h --approvers U123ABC,S456DEF --approval-timeout 30m --remedy fallback
  arbiter budget set -f budgets/llm.yaml`,
		Args: func(cmd *cobra.Command, args []string) error {
			if file != "" {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if file != "" {
				for _, name := range []string{"scope", "period", "limit", "currency", "alert", "forecast-alert", "on", "approve-over", "restore", "approvers", "approval-timeout", "remedy"} {
					if cmd.Flags().Changed(name) {
						return fmt.Errorf("--%s and -f both given: put the policy in the file, or use flags without -f", name)
					}
				}
			}
			policies, err := policiesToSet(file, args, fl)
			if err != nil {
				return err
			}
			warned, err := warnScopes(cmd.ErrOrStderr(), fleetPath, policies)
			if err != nil {
				return err
			}
			return asUser(cmd, g, o, budget.NewAdmin, func(ctx context.Context, a *budget.Admin) error {
				for _, p := range policies {
					rev, warns, err := a.Put(ctx, p)
					if err != nil {
						return err
					}
					fmt.Fprintf(cmd.OutOrStdout(), "budget %q set (revision %d, by %s)\n", p.Name, rev, a.User())
					for _, w := range warns {
						if !warned[p.Name+"\x00"+w] {
							fmt.Fprintf(cmd.ErrOrStderr(), "warning: budget %q: %s (the arbiter's fleet file)\n", p.Name, w)
						}
					}
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVarP(&file, "file", "f", "", "read policies from a YAML file ('-' for stdin) instead of flags")
	f.StringVar(&fleetPath, "fleet", "", "the fleet file to check each scope against, warning of one that matches no workload (default ./bursar.yaml if it exists)")
	f.StringVar(&fl.Scope, "scope", "", "what the budget covers: workload=NAME, team=NAME, provider=NAME, location=NAME (comma-separated to combine) or all")
	f.StringVar(&fl.Period, "period", "month", "budget period: day, week or month (UTC calendar periods)")
	f.Float64Var(&fl.Limit, "limit", 0, "spend limit per period")
	f.StringVar(&fl.Currency, "currency", "USD", "currency of the limit (ISO 4217)")
	f.StringSliceVar(&fl.Alerts, "alert", nil, "notify when actual spend reaches these levels: 80% or an amount")
	f.StringSliceVar(&fl.ForecastAlerts, "forecast-alert", nil, "notify when forecast spend for the period reaches these levels")
	f.StringArrayVar(&fl.On, "on", nil, "act at a level: [actual:|forecast:]LEVEL:ACTION with ACTION notify, require-approval, block-scale-up or scale-to-floor (repeatable)")
	f.StringVar(&fl.ApproveOver, "approve-over", "", "plans raising spend by more than this per hour need approval, e.g. 25/h")
	f.StringVar(&fl.Restore, "restore", string(budget.RestoreFirst), "replacing capacity lost to a reclaim, a failed launch or a vanished instance: "+
		"first (applied at once, the approvers told after with Keep and Go back) or ask (held for approval like any rise)")
	f.StringSliceVar(&fl.Approvers, "approvers", nil, "Slack user (U…) or user group (S…) ids who may approve")
	f.DurationVar(&fl.ApprovalTimeout, "approval-timeout", budget.DefaultApprovalTimeout, "an approval not given in this time counts as rejected")
	f.StringSliceVar(&fl.Remedies, "remedy", nil, "remedies to propose to the approvers when an anomaly in scope has their cause: "+
		"fallback (on-demand replicas left after a fallback, with spot priced again: propose moving them back to spot)")
	return cmd
}

func policiesToSet(file string, args []string, fl budget.Flags) ([]budget.Policy, error) {
	if file == "" {
		p, err := fl.Policy(args[0])
		if err != nil {
			return nil, err
		}
		return []budget.Policy{p}, nil
	}
	var data []byte
	var err error
	if file == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, fmt.Errorf("reading budget policies: %w", err)
	}
	return budget.ParseFile(file, data)
}

func budgetGetCmd(g *cli.Globals, o *budgetOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use: "get NAME", Short: "Show a budget policy", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd, g, func(ctx context.Context, s *budget.Store) error {
				r, err := s.Get(ctx, args[0])
				if err != nil {
					return err
				}
				return writeRevisions(cmd.OutOrStdout(), o.output, []budget.Revision{r}, showOne)
			})
		},
		Example: "  arbiter budget get llm-monthly\n  arbiter budget get llm-monthly -o yaml > budgets/llm.yaml",
	}
	cli.OutputFlag(cmd, &o.output, "table", "json", "yaml", "csv")
	return cmd
}

func budgetListCmd(g *cli.Globals, o *budgetOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use: "list", Short: "List budget policies", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withStore(cmd, g, func(ctx context.Context, s *budget.Store) error {
				rs, err := s.List(ctx)
				if err != nil {
					return err
				}
				return writeRevisions(cmd.OutOrStdout(), o.output, rs, showList)
			})
		},
		Example: "  arbiter budget list\n  arbiter budget list -o json",
	}
	cli.OutputFlag(cmd, &o.output, "table", "json", "yaml", "csv")
	return cmd
}

func budgetHistoryCmd(g *cli.Globals, o *budgetOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use: "history NAME", Short: "Show every revision of a budget policy: who changed it and when", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd, g, func(ctx context.Context, s *budget.Store) error {
				rs, err := s.History(ctx, args[0])
				if err != nil {
					return err
				}
				return writeRevisions(cmd.OutOrStdout(), o.output, rs, showHistory)
			})
		},
		Example: "  arbiter budget history llm-monthly\n  arbiter budget history llm-monthly -o yaml",
	}
	cli.OutputFlag(cmd, &o.output, "table", "json", "yaml", "csv")
	return cmd
}

func budgetDeleteCmd(g *cli.Globals, o *budgetOptions) *cobra.Command {
	return &cobra.Command{
		Use: "delete NAME", Short: "Delete a budget policy (its history stays)", Args: cobra.ExactArgs(1),
		Example: "  arbiter budget delete llm-monthly",
		RunE: func(cmd *cobra.Command, args []string) error {
			return asUser(cmd, g, o, budget.NewAdmin, func(ctx context.Context, a *budget.Admin) error {
				rev, err := a.Delete(ctx, args[0])
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "budget %q deleted (revision %d, by %s)\n", args[0], rev, a.User())
				return nil
			})
		},
	}
}

// who is the NATS user whose subject a change is asked on, which the arbiter records as
// the actor: --nats-identity, else --nats-user, else the embedded server's budget role. A wrong
// one is harmless: the server refuses a user's requests on any subject but its own.
func (o *budgetOptions) who(g *cli.Globals) (string, error) {
	if o.actor != "" {
		return "", errors.New("--actor is gone: the history records the NATS identity that made the change; connect as your own NATS user (--nats-user, --nats-creds) instead")
	}
	if id := strings.TrimSpace(o.identity); id != "" {
		return id, nil
	}
	if g.Auth.User != "" {
		return g.Auth.User, nil
	}
	return bus.RoleBudget, nil
}

// asUser connects as withStore does and runs fn with a client (built by newClient) that asks
// the arbiter as the caller's NATS identity: the budget and job commands' writes.
func asUser[C any](cmd *cobra.Command, g *cli.Globals, o *budgetOptions, newClient func(*nats.Conn, string) (C, error),
	fn func(context.Context, C) error) error {
	id, err := o.who(g)
	if err != nil {
		return err
	}
	return withNATS(cmd, g, func(ctx context.Context, nc *nats.Conn, _ jetstream.JetStream) error {
		c, err := newClient(nc, id)
		if err != nil {
			return err
		}
		return fn(ctx, c)
	})
}

// withStore connects to NATS, opens the budget store to read it and runs fn.
func withStore(cmd *cobra.Command, g *cli.Globals, fn func(context.Context, *budget.Store) error) error {
	return withNATS(cmd, g, func(ctx context.Context, _ *nats.Conn, js jetstream.JetStream) error {
		s, err := budget.OpenStore(ctx, js)
		if err != nil {
			return err
		}
		return fn(ctx, s)
	})
}

// withNATS connects as the budget role (with no --nats, to the embedded server of "arbiter run"
// at its default address) and runs fn under a deadline.
func withNATS(cmd *cobra.Command, g *cli.Globals, fn func(context.Context, *nats.Conn, jetstream.JetStream) error) error {
	log, err := g.Logger(cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
	defer cancel()
	nc, js, err := g.Dial(ctx, "", bus.RoleBudget, "arbiter-budget", log.With("cmd", "budget"))
	if err != nil {
		return fmt.Errorf("%w (is \"arbiter run\" up, or is --nats right?)", err)
	}
	defer nc.Close()
	return fn(ctx, nc, js)
}

var budgetColumns = []string{"name", "scope", "period", "limit", "currency", "thresholds",
	"approve_over", "restore", "approvers", "timeout", "remedies", "revision", "actor", "at"}

// show says what a listing of revisions is.
type show int

const (
	showOne     show = iota // get: one live policy
	showList                // list: the live policies
	showHistory             // history: revisions of one policy, with who and when
)

// writeRevisions prints revisions as a table, CSV, JSON (the stored revisions) or YAML. The YAML of
// get and list is what "set -f" reads, so a policy can be fetched into git and set back.
func writeRevisions(w io.Writer, format string, rs []budget.Revision, what show) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if what == showOne {
			return enc.Encode(rs[0])
		}
		if rs == nil {
			rs = []budget.Revision{}
		}
		return enc.Encode(rs)
	case "yaml":
		return writeYAML(w, rs, what)
	case "table", "", "csv":
		rows := make([]cli.Row, len(rs))
		for i, r := range rs {
			rows[i] = budgetRow(r)
		}
		return cli.Write(w, format, budgetColumns, rows)
	}
	return fmt.Errorf("--output %q: want table, json, yaml or csv", format)
}

// historyYAML is one revision in history's YAML: who and when beside the policy.
type historyYAML struct {
	Revision uint64        `yaml:"revision"`
	Actor    string        `yaml:"actor"`
	At       time.Time     `yaml:"at"`
	Deleted  bool          `yaml:"deleted,omitempty"`
	Policy   budget.Policy `yaml:"policy"`
}

func writeYAML(w io.Writer, rs []budget.Revision, what show) error {
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	for _, r := range rs {
		var v any = r.Policy
		if what == showHistory {
			v = historyYAML{r.Revision, r.Actor, r.At, r.Deleted, r.Policy}
		}
		if err := enc.Encode(v); err != nil {
			return err
		}
	}
	return enc.Close()
}

func budgetRow(r budget.Revision) cli.Row {
	p := r.Policy
	var ths []string
	for _, t := range p.Thresholds {
		s := t.At.String()
		if t.On == budget.Forecast {
			s = "forecast " + s
		}
		if t.Action != budget.Notify {
			s += ":" + string(t.Action)
		}
		ths = append(ths, s)
	}
	name := p.Name
	if r.Deleted {
		name += " (deleted)"
	}
	approve, restore := "", ""
	if p.ApproveOver > 0 { // restore says what approve_over does to a replacement of lost capacity
		approve, restore = p.ApproveOver.String(), string(budget.RestoreFirst)
		if !p.RestoresFirst() {
			restore = string(budget.RestoreAsk)
		}
	}
	return cli.Row{"name": name, "scope": p.Scope.String(), "period": string(p.Period),
		"limit": fmt.Sprintf("%.2f", p.Limit), "currency": p.Currency, "thresholds": strings.Join(ths, ","),
		"approve_over": approve, "restore": restore, "approvers": strings.Join(p.Approvers, ","), "timeout": p.Timeout().String(),
		"remedies": remedyList(p.Remedies),
		"revision": r.Revision, "actor": r.Actor, "at": r.At.Format(time.RFC3339)}
}

func remedyList(rs []budget.Remedy) string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r)
	}
	return strings.Join(out, ",")
}
