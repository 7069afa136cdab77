package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
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
	var month, fleetFile, output, file, metadata, version string
	cmd := &cobra.Command{
		Use: "focus", Short: "Export a month's cost and usage as a FOCUS 1.3 (or 1.2) dataset (CSV or Parquet)", Args: cobra.NoArgs,
		Long: `focus exports a month's cost and usage as a FOCUS cost and usage dataset (FOCUS 1.3, or 1.2
with --focus-version 1.2): one row per day, workload, location, market and GPU model.
BillingAccountId is the location's first account_ids entry in the fleet file (the location's
name, with a note, where it has none); reserved capacity carries the commitment discount columns;
Tags hold the workload, location, market and the workload's team; tokens served are in x_
columns. 1.3 adds ServiceProviderName and HostProviderName (they differ on a marketplace cloud:
vast, runpod), makes each row a split cost allocation (ResourceId is the day's capacity of a GPU
model and market at the location, AllocatedResourceId the workload's share of it, its workload
and team tags in AllocatedTags) and gives reserved capacity ContractApplied. --metadata writes
the dataset's FOCUS metadata (generator, FOCUS version, column types) as JSON.`,
		Example: `  report focus --month 2026-11 > focus-2026-11.csv
  report focus --month 2026-11 -o parquet --file focus-2026-11.parquet --metadata focus-2026-11.json
  report focus --month 2026-11 --focus-version 1.2 > focus-2026-11-v1.2.csv
  report focus --month 2026-11 --fleet bursar.yaml -o json`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, err := report.ParseFOCUSVersion(version)
			if err != nil {
				return err
			}
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
			// The store's owner answers in 1.2, whatever its release; the version is shaped here.
			if res, err = report.FOCUSAs(v, res); err != nil {
				return err
			}
			if err := writeTo(cmd.OutOrStdout(), file, func(out io.Writer) error { return report.Write(out, output, res, "") }); err != nil {
				return err
			}
			notesToStderr(cmd, output, res)
			if metadata == "" {
				return nil
			}
			meta, err := report.FOCUSMetadata(v, "Bursar", res.Columns, focusExtraTypes, now)
			if err != nil {
				return err
			}
			return writeTo(nil, metadata, func(out io.Writer) error {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(meta)
			})
		},
	}
	cmd.Flags().StringVar(&month, "month", time.Now().UTC().Format("2006-01"), "the billing period, e.g. 2026-11")
	cmd.Flags().StringVar(&fleetFile, "fleet", "bursar.yaml", "fleet file, for regions, account ids, teams and list prices")
	cmd.Flags().StringVar(&file, "file", "", "write the dataset to this file instead of standard output")
	cmd.Flags().StringVar(&version, "focus-version", report.FOCUSVersions[0],
		"the FOCUS version to write: "+strings.Join(report.FOCUSVersions, " or "))
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
