package main

import (
	"testing"

	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/cli/clitest"
)

func root() *cobra.Command { return newRoot(&cli.Globals{}) }

// TestDocsNameOnlyCommandsThatExist: the soak left arbiter for a program of its own, and the
// docs that said "arbiter soak" must say "soak".
func TestDocsNameOnlyCommandsThatExist(t *testing.T) {
	clitest.CheckDocCommands(t, "soak", "../..", root, "../../README.md", "../../docs/*.md")
	if err := clitest.Resolve(root(), []string{"--trace", "DIR", "--market", "12h", "--no-approvals"}); err != nil {
		t.Errorf("soak --trace DIR --market 12h --no-approvals: %v", err)
	}
}

func TestEveryCommandHasAnExample(t *testing.T) { clitest.CheckExamples(t, root()) }

func TestFlagHelpHasNoStrayBackquotes(t *testing.T) { clitest.CheckFlagUsages(t, root()) }

func TestFlagHelpNamesItsEnv(t *testing.T) { clitest.CheckEnvHelp(t, root()) }

// TestFlagsReadTheirEnv: BURSAR_SOAK_MARKET and BURSAR_SOAK_NO_APPROVALS set what --market and
// --no-approvals would, and a flag on the command line wins.
func TestFlagsReadTheirEnv(t *testing.T) {
	t.Setenv("BURSAR_SOAK_MARKET", "12h")
	t.Setenv("BURSAR_SOAK_NO_APPROVALS", "true")
	t.Setenv("BURSAR_SOAK_SEED", "7")
	r := root()
	if err := r.ParseFlags([]string{"--seed", "3"}); err != nil {
		t.Fatal(err)
	}
	if err := cli.ApplyEnv(r); err != nil {
		t.Fatal(err)
	}
	for flag, want := range map[string]string{"market": "12h0m0s", "no-approvals": "true", "seed": "3"} {
		if got := r.Flags().Lookup(flag).Value.String(); got != want {
			t.Errorf("--%s = %q, want %q", flag, got, want)
		}
	}
}
