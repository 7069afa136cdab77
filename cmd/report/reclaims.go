package main

import (
	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/report"
)

// newReclaimsCmd is `report reclaims`: notices, time to replacement and time to first GPU.
func newReclaimsCmd(g *cli.Globals) *cobra.Command {
	cmd, _ := reportCmd(g, "reclaims", "Reclaims by provider, location and zone: notice, time to replacement, time to first GPU",
		"", false, false, report.Reclaims)
	return cmd
}
