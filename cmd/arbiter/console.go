package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/console"
)

// newConsoleCmd is `arbiter console`: what the web console needs from the command line.
func newConsoleCmd(g *cli.Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "console",
		Short: "Manage access to the web console",
		Long: `console manages who may approve in the web console that arbiter run serves (--console-listen,
127.0.0.1:9470 by default; docs/console.md). Reading the console needs no identity.`,
		Example: "  arbiter console token --as U0123ABC   # a login token for an approver, printed once",
		Args:    cobra.NoArgs,
	}
	cmd.AddCommand(newConsoleTokenCmd(g))
	return cmd
}

// newConsoleTokenCmd is `arbiter console token --as ID`: a login token for one approver.
func newConsoleTokenCmd(g *cli.Globals) *cobra.Command {
	var as string
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Make a console login token for an approver (printed once)",
		Long: `token makes a token that logs ID in to the console, to approve or reject held plans. ID is a
Slack user id as the budget policies' approvers list it (U0123ABC), or an e-mail Slack resolves.
Only the token's SHA-256 is kept, in <data-dir>/console/tokens (0600); the token is printed once.
Making a new token for the same ID replaces the old one.`,
		Example: "  arbiter console token --as U0123ABC",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			token, err := console.IssueToken(g.DataDir, as)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), token)
			fmt.Fprintf(cmd.ErrOrStderr(), "the console token of %s, printed once: open the console (arbiter run serves it on "+
				"--console-listen), choose \"Log in to approve\" and paste it; scripts send it as \"Authorization: Bearer TOKEN\"\n", as)
			return nil
		},
	}
	cmd.Flags().StringVar(&as, "as", "", "the identity: a Slack user id (U0123ABC) or an e-mail (required)")
	_ = cmd.MarkFlagRequired("as")
	return cmd
}
