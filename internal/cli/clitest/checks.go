package clitest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/bursar-dev/bursar/internal/cli"
)

// CheckDocCommands fails t for every command line of program in the markdown files matching
// globs that newRoot's tree does not know: an unknown command, an unknown flag or a value its
// flag refuses, or a file a user of the repository does not have. Each line is checked on a fresh
// tree; repoRoot is the repository's root, which examples/ paths are read from.
func CheckDocCommands(t *testing.T, program, repoRoot string, newRoot func() *cobra.Command, globs ...string) {
	t.Helper()
	cmds, err := DocCommands(program, globs...)
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) == 0 {
		t.Fatalf("no %s command lines found in %v: is the path right?", program, globs)
	}
	for _, dc := range cmds {
		if err := Resolve(newRoot(), dc.Args); err != nil {
			t.Errorf("%s: %q: %v", dc.At, dc.Line, err)
		}
		if err := checkPaths(dc.Args, repoRoot); err != nil {
			t.Errorf("%s: %q: %v", dc.At, dc.Line, err)
		}
	}
}

// checkPaths fails a command line a user of the repository cannot run as written: one reading a
// file outside the repository (../shared/data is the developers' own), or an examples/ file that
// is not there.
func checkPaths(args []string, root string) error {
	for _, a := range args {
		_, v, ok := strings.Cut(a, "=")
		if !ok || !strings.HasPrefix(a, "-") {
			v = a
		}
		switch {
		case strings.HasPrefix(v, "../"):
			return fmt.Errorf("%s is outside the repository: use a file under examples/", v)
		case strings.HasPrefix(v, "examples/"):
			if _, err := os.Stat(filepath.Join(root, v)); err != nil {
				return fmt.Errorf("%s is not in the repository", v)
			}
		}
	}
	return nil
}

// Resolve finds the command args name under root and parses its flags, as running it would,
// without running it.
func Resolve(root *cobra.Command, args []string) error {
	c, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	c.InitDefaultHelpFlag()
	return c.ParseFlags(rest)
}

// CheckExamples fails t for every command under root with no Example in its --help.
func CheckExamples(t *testing.T, root *cobra.Command) {
	t.Helper()
	cli.Walk(root, func(c *cobra.Command) {
		if !c.Hidden && strings.TrimSpace(c.Example) == "" {
			t.Errorf("%q has no Example", c.CommandPath())
		}
	})
}

// valueName is a back-quoted word pflag may show as a flag's value name: FILE, NAME, DURATION.
var valueName = regexp.MustCompile("`[A-Z][A-Z0-9_]*`")

// CheckFlagUsages fails t for a flag whose help has back-quotes around anything but a value
// name in capitals: pflag takes the first back-quoted text as the value's name, so
// "check it with `arbiter config check`" prints as "--config arbiter config check".
func CheckFlagUsages(t *testing.T, root *cobra.Command) {
	t.Helper()
	cli.Walk(root, func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if !strings.Contains(f.Usage, "`") {
				return
			}
			name, _ := pflag.UnquoteUsage(f)
			if !valueName.MatchString(f.Usage) || strings.Count(f.Usage, "`") != 2 {
				t.Errorf("%s --%s: back-quotes in its help make %q its value name: %q", c.CommandPath(), f.Name, name, f.Usage)
			}
		})
	})
}

// CheckOutputs fails t unless every runnable command under root either takes -o/--output made by
// cli.OutputFlag with at least want's formats, or is in noData (path: why it prints no data).
func CheckOutputs(t *testing.T, root *cobra.Command, want []string, noData map[string]string) {
	t.Helper()
	cli.Walk(root, func(c *cobra.Command) {
		if !c.Runnable() || c.Hidden {
			return
		}
		path := c.CommandPath()
		f := c.Flags().Lookup("output")
		if _, exempt := noData[path]; exempt {
			if f != nil {
				t.Errorf("%s takes --output but is listed as printing no data", path)
			}
			return
		}
		if f == nil || f.Shorthand != "o" {
			t.Errorf("%s prints data but takes no -o/--output (or list it with the reason it prints none)", path)
			return
		}
		got := strings.Split(c.Annotations[cli.AnnotationOutput], ",")
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("%s -o: formats %v lack %q", path, got, w)
			}
		}
		if def := f.DefValue; len(got) > 0 && def != got[0] {
			t.Errorf("%s -o: default %q is not its first format %q", path, def, got[0])
		}
	})
}

// CheckEnvHelp fails t for a flag whose help does not name the environment variable it is read
// from (cli.FlagEnv), or names another program's.
func CheckEnvHelp(t *testing.T, root *cobra.Command) {
	t.Helper()
	cli.Walk(root, func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name == "help" {
				return
			}
			if want := "(env " + cli.FlagEnv(c, f); !strings.Contains(f.Usage, want) {
				t.Errorf("%s --%s: help lacks %q: %q", c.CommandPath(), f.Name, want+")", f.Usage)
			}
		})
	})
}
