package main

import (
	"testing"

	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/cli/clitest"
)

// TestCommandLine runs the checks every program's command tree passes. The docs said
// "arbiter soak" until the soak left arbiter for a program of its own; they must say "soak".
func TestCommandLine(t *testing.T) {
	root := func() *cobra.Command { return newRoot(&cli.Globals{}) }
	for name, check := range map[string]func(*testing.T){
		"docs name only commands that exist": func(t *testing.T) {
			clitest.CheckDocCommands(t, "soak", "../..", root, "../../README.md", "../../docs/*.md")
		},
		"every command has an example":      func(t *testing.T) { clitest.CheckExamples(t, root()) },
		"flag help has no stray backquotes": func(t *testing.T) { clitest.CheckFlagUsages(t, root()) },
		"flag help names its env":           func(t *testing.T) { clitest.CheckEnvHelp(t, root()) },
	} {
		t.Run(name, check)
	}
	if err := clitest.Resolve(root(), []string{"--trace", "DIR", "--market", "12h", "--no-approvals"}); err != nil {
		t.Errorf("soak --trace DIR --market 12h --no-approvals: %v", err)
	}
}

// TestFlagsReadTheirEnv: BURSAR_SOAK_MARKET and BURSAR_SOAK_NO_APPROVALS set what --market and
// --no-approvals would, and a flag on the command line wins over BURSAR_SOAK_SEED.
func TestFlagsReadTheirEnv(t *testing.T) {
	t.Setenv("BURSAR_SOAK_MARKET", "12h")
	t.Setenv("BURSAR_SOAK_NO_APPROVALS", "true")
	t.Setenv("BURSAR_SOAK_SEED", "7")
	r := newRoot(&cli.Globals{})
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
