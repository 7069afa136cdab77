package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/report"
	"github.com/bursar-dev/bursar/internal/store"
	"github.com/bursar-dev/bursar/internal/store/chdb"
)

// newImportBillingCmd is `report import-billing --focus FILE|DIR`: load the providers' FOCUS
// exports, so reconcile and --basis billed have billed cost to show.
func newImportBillingCmd(g *cli.Globals) *cobra.Command {
	var paths []string
	var output string
	cmd := &cobra.Command{
		Use:   "import-billing",
		Short: "Import billed cost from FOCUS exports (CSV or Parquet, gzip allowed)",
		Long: `import-billing loads FOCUS 1.2 cost and usage exports, CSV or Parquet, gzipped or not (AWS
Data Exports, Azure Cost Management FOCUS exports, Google Cloud's FOCUS view exported from
BigQuery), into the history. Provider columns (x_...) are passed over.

Every file is checked against the FOCUS column table first; a malformed one is named with its
row and column, and nothing is imported. The files of one import that hold a provider's billing
account and period are one export: importing the same files again changes nothing, and a newer
export of a period replaces the older one (import the whole folder an export wrote for a period
at once, since providers split one export into several files).

It writes to the store, so with the embedded store the process that owns it (arbiter run) must
not be running; with a ClickHouse server (--clickhouse) it can be.`,
		Example: `  report import-billing --focus exports/aws/2026-11/
  report import-billing --focus azure-focus-2026-11.csv.gz --focus gcp-focus-2026-11.parquet -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return importBilling(cmd, g, paths, output)
		},
	}
	cmd.Flags().StringArrayVar(&paths, "focus", nil, "a FOCUS export file or a directory of them (repeatable)")
	_ = cmd.MarkFlagRequired("focus")
	cli.OutputFlag(cmd, &output, report.Formats...)
	return cmd
}

func importBilling(cmd *cobra.Command, g *cli.Globals, paths []string, output string) error {
	log, err := g.Logger(cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Minute)
	defer cancel()
	exports, err := report.ReadExports(paths)
	if err != nil {
		return err
	}
	st, err := store.Open(ctx, store.Config{DSN: g.ClickHouse, DataDir: g.DataDir, Owner: "report import-billing", Log: log})
	if err != nil {
		return explainImportOwned(err)
	}
	defer st.Close()
	imp, err := report.ImportBilling(ctx, st, exports, time.Now().UTC())
	if err != nil {
		return err
	}
	return report.Write(cmd.OutOrStdout(), output, importResult(imp), "")
}

// explainImportOwned says what to do when the embedded store import-billing must write to is
// owned by another process (arbiter run): an import cannot go through the owner, as reports do,
// nor into a data directory of its own, which the owner would never read.
func explainImportOwned(err error) error {
	var owned *chdb.OwnedError
	if !errors.As(err, &owned) {
		return err
	}
	who := "another process"
	if owned.Owner.PID != 0 {
		who = owned.Owner.String()
	}
	return fmt.Errorf("import-billing writes to the store, and the embedded ClickHouse store %s is owned by %s, "+
		"which takes no writes from other processes: stop it, import the bill, then start it again; or run "+
		"Bursar against a ClickHouse server (--clickhouse), where import-billing can run at any time", owned.Dir, who)
}

// importResult lists what an import did, one row per export.
func importResult(imp []report.Imported) *report.Result {
	res := &report.Result{Title: "Billing exports imported",
		Columns: []string{"provider", "billing_account", "period", "charges", "status", "export_id", "files"}}
	for _, i := range imp {
		status := "imported"
		if i.Skipped {
			status = "unchanged (imported before)"
		}
		res.Rows = append(res.Rows, cli.Row{"provider": i.Provider, "billing_account": i.Account,
			"period": i.Period.Format("2006-01"), "charges": i.Charges, "status": status, "export_id": i.ExportID,
			"files": strings.Join(i.Files, " ")})
	}
	return res
}

// newReconcileCmd is `report reconcile`: estimated against billed, per workload, location and day.
func newReconcileCmd(g *cli.Globals) *cobra.Command {
	cmd, _ := reportCmd(g, "reconcile", "Estimated cost against the imported bill, per workload, location and day",
		`  report reconcile --since 2026-11-01 --until 2026-12-01 --fleet bursar.yaml
  report reconcile --period 7d --filter workload="(unmatched)" -o csv`,
		false, true, nil)
	cmd.Long = `reconcile matches the billed charges imported by import-billing to Bursar's replicas and
prints, per day, workload and location: estimated_usd, billed_cost (FOCUS BilledCost),
effective_cost (EffectiveCost, amortized), difference (effective_cost - estimated_usd), commitment
(what commitment discounts changed the cost by) and causes. A charge goes to the workload whose
replicas ran on the instance its ResourceId names during its charge period (replica.state names
the instances), else to the workload its tags name (bursar-workload), else is shared among the
workloads that ran its instance type at its location in its charge period; what matches nothing
is "(unmatched)" billed spend. The causes column and a note say which rule matched. Credits, tax,
purchases and unused commitments are lines of their own. Locations come from the fleet file:
provider, region, zones and account_ids. Charges billed in a currency other than USD are refused:
the estimates are in USD and the exports carry no exchange rate.`
	return cmd
}

// bindBasis adds --basis to cost, tokens and savings.
func (f *reportFlags) bindBasis(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.basis, "basis", report.BasisEstimated,
		"estimated, or billed: imported FOCUS EffectiveCost where matched (report reconcile), estimated elsewhere")
}
