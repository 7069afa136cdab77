package main

import (
	"testing"

	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/cli/clitest"
)

func root() *cobra.Command { return newRoot(&cli.Globals{}) }

func TestDocsNameOnlyCommandsThatExist(t *testing.T) {
	clitest.CheckDocCommands(t, "collector", "../..", root, "../../README.md", "../../docs/*.md", "../../examples/*.md", "../../examples/*/*.md")
}

func TestEveryCommandHasAnExample(t *testing.T) { clitest.CheckExamples(t, root()) }

func TestFlagHelpHasNoStrayBackquotes(t *testing.T) { clitest.CheckFlagUsages(t, root()) }

// TestFlagHelpNamesItsEnv: collector's --config was read from BURSAR_CONFIG, which the arbiter
// read too. Each program's own flags now have variables of their own.
func TestFlagHelpNamesItsEnv(t *testing.T) { clitest.CheckEnvHelp(t, root()) }

func TestEveryDataCommandTakesOutput(t *testing.T) {
	clitest.CheckOutputs(t, root(), []string{"table", "json", "yaml", "csv"}, map[string]string{
		"collector run":          "runs until stopped; logs only",
		"collector config check": "prints a verdict on a file",
		"collector version":      "one line for a person",
	})
}
