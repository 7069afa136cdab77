// Package cli holds what the three programs (and the soak) share on the command line: the global flags and
// their BURSAR_* environment fallbacks, logging, the version command, signal handling and the
// Prometheus endpoint. Each cmd/*/main.go stays a page of wiring.
package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Version is set at build time with -ldflags "-X github.com/bursar-dev/bursar/internal/cli.Version=v1.2.3".
var Version = "dev"

// Globals are the flags every program takes.
type Globals struct {
	NATS       string // NATS URL; empty means "the default for this program"
	DataDir    string
	ClickHouse string // ClickHouse DSN; empty means the embedded engine under DataDir
	LogFormat  string
	LogLevel   string
	Auth       NATSAuth // credentials and TLS for NATS

	insecureTold atomic.Bool // CheckServerAuth warned of --nats-insecure
}

// Bind adds the global flags to cmd as persistent flags. natsHelp explains what an empty --nats
// means for this program.
func (g *Globals) Bind(cmd *cobra.Command, natsDefault, natsHelp string) {
	f := cmd.PersistentFlags()
	f.StringVar(&g.NATS, "nats", natsDefault, natsHelp+" (env BURSAR_NATS; credentials: --nats-creds, --nats-nkey or --nats-user)")
	f.StringVar(&g.DataDir, "data-dir", "./bursar-data", "where embedded NATS and ClickHouse keep their files (env BURSAR_DATA_DIR)")
	f.StringVar(&g.ClickHouse, "clickhouse", "", "ClickHouse server DSN, e.g. clickhouse://user@host:9440/bursar?secure=true, never with a password: that comes from BURSAR_CLICKHOUSE_PASSWORD or the file BURSAR_CLICKHOUSE_PASSWORD_FILE names; a private CA and client certificate from BURSAR_CLICKHOUSE_TLS_CA, _TLS_CERT, _TLS_KEY. Empty: the embedded engine under --data-dir (env BURSAR_CLICKHOUSE)")
	g.bindLog(cmd)
	g.Auth.bind(f)
}

// bindLog adds the logging flags, the only global flags a program with no NATS or ClickHouse of
// its own takes.
func (g *Globals) bindLog(cmd *cobra.Command) {
	f := cmd.PersistentFlags()
	f.StringVar(&g.LogFormat, "log-format", "text", "log format: text or json (env BURSAR_LOG_FORMAT)")
	f.StringVar(&g.LogLevel, "log-level", "info", "log level: debug, info, warn or error (env BURSAR_LOG_LEVEL)")
}

// EnvName is the environment variable that stands in for a global flag, one every program
// shares (the same NATS, the same data directory): --data-dir is BURSAR_DATA_DIR.
func EnvName(flag string) string {
	return "BURSAR_" + envWord(flag)
}

// ProgramEnvName is the environment variable of a flag only some commands of program take:
// collector's --config is BURSAR_COLLECTOR_CONFIG and arbiter's BURSAR_ARBITER_CONFIG, so a
// variable set for one program never changes another on the same machine.
func ProgramEnvName(program, flag string) string {
	return "BURSAR_" + envWord(program) + "_" + envWord(flag)
}

// FlagEnv is the environment variable of flag f as cmd sees it: EnvName for the root's
// persistent (global) flags, ProgramEnvName for every other.
func FlagEnv(cmd *cobra.Command, f *pflag.Flag) string {
	root := cmd.Root()
	if root.PersistentFlags().Lookup(f.Name) == f {
		return EnvName(f.Name)
	}
	return ProgramEnvName(root.Name(), f.Name)
}

func envWord(s string) string { return strings.ToUpper(strings.ReplaceAll(s, "-", "_")) }

// ApplyEnv sets every flag of cmd that was not given on the command line from its environment
// variable (FlagEnv), so flags win over the environment and the environment over defaults.
func ApplyEnv(cmd *cobra.Command) error {
	var err error
	apply := func(f *pflag.Flag) {
		if err != nil || f.Changed || f.Name == "help" {
			return
		}
		name := FlagEnv(cmd, f)
		v, ok := os.LookupEnv(name)
		if !ok {
			return
		}
		if serr := f.Value.Set(v); serr != nil {
			err = fmt.Errorf("%s=%q: %w", name, v, serr)
			return
		}
		f.Changed = true
	}
	cmd.Flags().VisitAll(apply)
	cmd.InheritedFlags().VisitAll(apply)
	return err
}

// DocumentEnv appends "(env NAME)" to the help of every flag under root that does not name its
// variable yet, so --help says how each flag is set from the environment. Call it once the
// tree is complete.
func DocumentEnv(root *cobra.Command) {
	Walk(root, func(cmd *cobra.Command) {
		cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name != "help" && !strings.Contains(f.Usage, "(env ") {
				f.Usage += " (env " + FlagEnv(cmd, f) + ")"
			}
		})
	})
}

// Walk calls fn for cmd and every command under it, parents first.
func Walk(cmd *cobra.Command, fn func(*cobra.Command)) {
	fn(cmd)
	for _, c := range cmd.Commands() {
		Walk(c, fn)
	}
}

// Logger builds the slog logger the flags ask for.
func (g *Globals) Logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(g.LogLevel)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", g.LogLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch g.LogFormat {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", g.LogFormat)
}

// NATSURL is the URL to dial: --nats, or the embedded server's default address.
func (g *Globals) NATSURL() string {
	if g.NATS == "" {
		return DefaultNATS
	}
	return g.NATS
}

// Root makes a program's root command with the global flags, the environment fallbacks and the
// version command. setup runs before any subcommand, once flags are final.
func Root(name, short, long string, g *Globals, natsDefault, natsHelp string) *cobra.Command {
	root := bareRoot(name, short, long, g)
	g.Bind(root, natsDefault, natsHelp)
	return root
}

// Tool makes the root of a program that is one command and dials no NATS or ClickHouse of its
// own (the soak, which starts its own): the logging flags, the environment fallbacks and the
// version command. The caller sets its RunE, Args and flags.
func Tool(name, short, long string, g *Globals) *cobra.Command {
	root := bareRoot(name, short, long, g)
	g.bindLog(root)
	return root
}

// bareRoot is a root command that applies the environment and checks the logging flags before
// it or any subcommand runs, with the version command and no flags yet.
func bareRoot(name, short, long string, g *Globals) *cobra.Command {
	root := &cobra.Command{
		Use: name, Short: short, Long: long,
		SilenceUsage: true, SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := ApplyEnv(cmd); err != nil {
				return err
			}
			if _, err := g.Logger(io.Discard); err != nil {
				return err
			}
			return nil
		},
	}
	root.AddCommand(versionCmd(name))
	return root
}

func versionCmd(name string) *cobra.Command {
	return &cobra.Command{
		Use: "version", Short: "Print the version and build information", Args: cobra.NoArgs,
		Example: "  " + name + " version",
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), VersionString(name))
			return err
		},
	}
}

// VersionString describes this build: version, commit and Go version where known.
func VersionString(name string) string {
	s := name + " " + Version
	if rev := revision(); len(rev) >= 12 {
		s += " (" + rev[:12] + ")"
	}
	return s + " " + runtime.Version()
}

// revision is the VCS commit Go stamped into the binary; empty when built outside a checkout.
func revision() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, kv := range bi.Settings {
			if kv.Key == "vcs.revision" {
				return kv.Value
			}
		}
	}
	return ""
}

// Main runs root with a context cancelled on SIGINT or SIGTERM, prints an error to stderr and
// returns the exit code.
func Main(root *cobra.Command) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", root.Name(), err)
		return 1
	}
	return 0
}
