package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	fleetfile "github.com/bursar-dev/bursar/internal/fleet"
)

// newConfigCmd is `arbiter config check FILE`: validate a fleet file without running anything.
func newConfigCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Work with the fleet file (bursar.yaml)",
		Example: "  arbiter config check bursar.yaml"}
	cmd.AddCommand(&cobra.Command{
		Use:     "check FILE",
		Short:   "Validate a fleet file: strict fields, required values, actuator settings",
		Example: "  arbiter config check examples/bursar.yaml",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := fleetfile.Load(args[0])
			if err != nil {
				return err
			}
			if err := cfg.CheckSecrets(os.LookupEnv); err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s: ok: %d locations, %d workloads\n", args[0], len(cfg.Locations), len(cfg.Workloads))
			return err
		},
	})
	return cmd
}
