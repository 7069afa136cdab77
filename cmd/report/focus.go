package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/billing"
	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/report"
)

// focusExtraTypes are the types of the export's own x_ columns, for its metadata.
var focusExtraTypes = map[string]billing.Type{"x_ReplicaHours": billing.Decimal, "x_PromptTokens": billing.Decimal,
	"x_GenerationTokens": billing.Decimal, "x_Requests": billing.Decimal}

// newFocusCmd is `report focus --month 2026-11`: a FOCUS cost and usage export, CSV or Parquet.
func newFocusCmd(g *cli.Globals) *cobra.Command {
	var month, fleetFile, output, file, metadata string
	cmd := &cobra.Command{
		Use: "focus", Short: "Export a month's cost and usage as a FOCUS " + billing.Version + " dataset (CSV or Parquet)", Args: cobra.NoArgs,
		Long: `focus exports a month's cost and usage as a FOCUS ` + billing.Version + ` cost and usage dataset: one
row per day, workload, location, market and GPU model. BillingAccountId is the location's first
account_ids entry in the fleet file (the location's name, with a note, where it has none); reserved
capacity carries the commitment discount columns; Tags hold the workload, location, market and
the workload's team. --metadata writes the dataset's FOCUS metadata (generator, FOCUS version,
column types) as JSON.`,
		Example: `  report focus --month 2026-11 > focus-2026-11.csv
  report focus --month 2026-11 -o parquet --file focus-2026-11.parquet --metadata focus-2026-11.json
  report focus --month 2026-11 --fleet bursar.yaml -o json`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output == "parquet" && file == "" && cli.IsTerminal(cmd.OutOrStdout()) {
				return fmt.Errorf("-o parquet writes a binary file, not text for a terminal: give --file focus-%s.parquet "+
					"(or redirect standard output to a file)", month)
			}
			w, err := report.ParseMonth(month)
			if err != nil {
				return err
			}
			fl, err := loadFleet(fleetFile, false)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Minute)
			defer cancel()
			r, closeFn, err := open(ctx, cmd, g)
			if err != nil {
				return err
			}
			defer closeFn()
			now := time.Now().UTC()
			res, err := r.Run(ctx, report.NewRequest("focus", report.Options{Window: w, Now: now, Fleet: fl}))
			if err != nil {
				return err
			}
			if err := writeTo(cmd.OutOrStdout(), file, func(out io.Writer) error { return report.Write(out, output, res, "") }); err != nil {
				return err
			}
			notesToStderr(cmd, output, res)
			if metadata == "" {
				return nil
			}
			return writeTo(nil, metadata, func(out io.Writer) error {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(billing.NewMetadata("Bursar", res.Columns, focusExtraTypes, now))
			})
		},
	}
	cmd.Flags().StringVar(&month, "month", time.Now().UTC().Format("2006-01"), "the billing period, e.g. 2026-11")
	cmd.Flags().StringVar(&fleetFile, "fleet", "bursar.yaml", "fleet file, for regions, account ids, teams and list prices")
	cmd.Flags().StringVar(&file, "file", "", "write the dataset to this file instead of standard output")
	cmd.Flags().StringVar(&metadata, "metadata", "", "also write the dataset's FOCUS metadata (JSON) to this file")
	cli.OutputFlag(cmd, &output, "csv", "parquet", "json", "yaml", "table", "markdown") // FOCUS is a CSV or Parquet format first
	return cmd
}

// writeTo runs write on path (created or truncated), or on stdout when path is empty.
func writeTo(stdout io.Writer, path string, write func(io.Writer) error) error {
	if path == "" {
		return write(stdout)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing the export: %w", err)
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
