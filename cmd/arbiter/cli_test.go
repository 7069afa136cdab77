package main

import (
	"testing"

	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/cli/clitest"
)

func root() *cobra.Command { return newRoot(&cli.Globals{}) }

// docs are the documents that name arbiter command lines.
var docs = []string{"../../README.md", "../../docs/*.md", "../../examples/*.md", "../../examples/*/*.md"}

// TestDocsNameOnlyCommandsThatExist: the README, docs/clickhouse.md and --no-history's help sent
// users to "arbiter record", which was never registered.
func TestDocsNameOnlyCommandsThatExist(t *testing.T) {
	clitest.CheckDocCommands(t, "arbiter", "../..", root, docs...)
	for _, args := range [][]string{{"record", "--durable", "recorder-a"}, {"status", "-o", "json"}} {
		if err := clitest.Resolve(root(), args); err != nil {
			t.Errorf("arbiter %v: %v", args, err)
		}
	}
}

func TestEveryCommandHasAnExample(t *testing.T) { clitest.CheckExamples(t, root()) }

// TestFlagHelpHasNoStrayBackquotes: "arbiter run --help" printed "--config arbiter config check".
func TestFlagHelpHasNoStrayBackquotes(t *testing.T) { clitest.CheckFlagUsages(t, root()) }

func TestFlagHelpNamesItsEnv(t *testing.T) { clitest.CheckEnvHelp(t, root()) }

// TestEveryDataCommandTakesOutput: "arbiter status -o json" was an unknown shorthand flag.
func TestEveryDataCommandTakesOutput(t *testing.T) {
	clitest.CheckOutputs(t, root(), []string{"table", "json", "yaml"}, map[string]string{
		"arbiter run":           "runs until stopped; logs only",
		"arbiter record":        "runs until stopped; logs only",
		"arbiter demo":          "prints a summary for a person and writes report.md; report reads its history as data",
		"arbiter config check":  "prints a verdict on a file",
		"arbiter budget set":    "prints what it changed",
		"arbiter budget delete": "prints what it changed",
		"arbiter job submit":    "prints what it changed",
		"arbiter job cancel":    "prints what it changed",
		"arbiter version":       "one line for a person",
		"arbiter console token": "prints one secret, once, for a person to paste",
	})
}
