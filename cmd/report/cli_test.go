package main

import (
	"testing"

	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/cli/clitest"
)

func root() *cobra.Command { return newRoot(&cli.Globals{}) }

func TestDocsNameOnlyCommandsThatExist(t *testing.T) {
	clitest.CheckDocCommands(t, "report", "../..", root, "../../README.md", "../../docs/*.md", "../../examples/*.md", "../../examples/*/*.md")
}

func TestEveryCommandHasAnExample(t *testing.T) { clitest.CheckExamples(t, root()) }

func TestFlagHelpHasNoStrayBackquotes(t *testing.T) { clitest.CheckFlagUsages(t, root()) }

func TestFlagHelpNamesItsEnv(t *testing.T) { clitest.CheckEnvHelp(t, root()) }

// TestEveryDataCommandTakesOutput: every report prints the formats every other Bursar command
// prints (and markdown: TestHelpTeachesEveryReport).
func TestEveryDataCommandTakesOutput(t *testing.T) {
	clitest.CheckOutputs(t, root(), []string{"table", "json", "yaml", "csv"}, map[string]string{
		"report serve":   "posts to Slack; --dry-run prints the markdown it would post",
		"report console": "serves web pages until stopped; logs only",
		"report version": "one line for a person",
	})
}
