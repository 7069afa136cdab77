package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/report"
)

// newFocusCmd is `report focus --month 2026-11`: a FOCUS 1.2 CSV export.
func newFocusCmd(g *cli.Globals) *cobra.Command {
	var month, fleetFile, output string
	cmd := &cobra.Command{
		Use: "focus", Short: "Export a month's cost and usage as FOCUS 1.2 CSV", Args: cobra.NoArgs,
		Example: `  report focus --month 2026-11 > focus-2026-11.csv
  report focus --month 2026-11 --fleet bursar.yaml -o json`,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
			res, err := r.Run(ctx, report.NewRequest("focus", report.Options{Window: w, Now: time.Now().UTC(), Fleet: fl}))
			if err != nil {
				return err
			}
			return report.Write(cmd.OutOrStdout(), output, res, "")
		},
	}
	cmd.Flags().StringVar(&month, "month", time.Now().UTC().Format("2006-01"), "the billing period, e.g. 2026-11")
	cmd.Flags().StringVar(&fleetFile, "fleet", "bursar.yaml", "fleet file, for regions and list prices")
	cli.OutputFlag(cmd, &output, "csv", "json", "yaml", "table", "markdown") // FOCUS is a CSV format first
	return cmd
}
