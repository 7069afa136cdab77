package main

import (
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/collect"
)

// newPricesCmd is `collector prices`: fetch one source once and print what Bursar sees.
// Credentials come from the environment (GCP_API_KEY, LAMBDA_API_KEY, RUNPOD_API_KEY,
// VAST_API_KEY, the AWS SDK's usual variables and files), never from flags.
func newPricesCmd() *cobra.Command {
	var o collect.PricesOptions
	cmd := &cobra.Command{
		Use:   "prices",
		Short: "Fetch GPU prices from one source and print the normalized offers",
		Example: `  collector prices --source azure --region eastus
  collector prices --source aws-spot --region us-east-1 -o json
  collector prices --file examples/demo/prices/aws_vms.csv
  collector prices --file examples/demo/prices/gcp_vms.csv -o csv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return collect.Prices(cmd.Context(), o, time.Now().UTC(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Source, "source", "", "source kind: "+strings.Join(collect.Kinds, ", ")+" (default skypilot when --file is given)")
	f.StringVar(&o.Region, "region", "", "region to fetch (azure, aws-spot, aws-ondemand; narrows gcp)")
	f.StringArrayVar(&o.Files, "file", nil, "SkyPilot catalog CSV or reserved contracts YAML (repeatable)")
	f.StringVar(&o.Endpoint, "endpoint", "", "override the provider API endpoint")
	f.DurationVar(&o.Timeout, "timeout", collect.DefaultTimeout, "give up a fetch (every page of it) after this long")
	cli.OutputFlag(cmd, &o.Output, collect.Formats...)
	return cmd
}
