package cli_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/cli/clitest"
)

// dialWith runs a program's root with args and dials NATS from its sub-command, as the
// programs do once their flags are final; it returns the log and the Dial error.
func dialWith(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var g cli.Globals
	var log bytes.Buffer
	root := cli.Root("arbiter", "test", "test", &g, "", "NATS URL")
	root.AddCommand(&cobra.Command{Use: "status", RunE: func(cmd *cobra.Command, _ []string) error {
		ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
		defer cancel()
		nc, _, err := g.Dial(ctx, "", bus.RoleArbiter, "test", slog.New(slog.NewTextHandler(&log, nil)))
		if err == nil {
			nc.Close()
		}
		return err
	}})
	root.SetArgs(append(args, "status"))
	err := root.Execute()
	return log.String(), err
}

// TestDialRefusesAServerWithoutAuthentication: a server with no users accepts any client, also
// one that presents credentials (nats-server#4324), so every program would run with no role's
// permissions enforced. Dial refuses it, naming --nats-insecure and the risk, whatever
// credentials are given; --nats-insecure or BURSAR_NATS_INSECURE accept it, with a warning. The
// embedded server "arbiter run" starts (bus.StartEmbedded, which bustest runs) requires
// authentication, and is accepted without the flag.
func TestDialRefusesAServerWithoutAuthentication(t *testing.T) {
	open := clitest.OpenNATS(t).ClientURL()
	secured := bustest.Start(t)
	seed := bus.SeedFile(secured.CredsDir, bus.RoleArbiter)
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte("unchecked"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		env      string // BURSAR_NATS_INSECURE
		args     []string
		wantErr  string
		wantWarn bool
	}{
		{name: "open, no credentials", args: []string{"--nats", open}, wantErr: "--nats-insecure"},
		{name: "open, with a password it does not check", args: []string{"--nats", open, "--nats-user", "ops", "--nats-password-file", pw}, wantErr: "any client that reaches it can act as any"},
		{name: "open, an nkey it does not take", args: []string{"--nats", open, "--nats-nkey", seed}, wantErr: "--nats-insecure"},
		{name: "open, --nats-insecure", args: []string{"--nats", open, "--nats-insecure"}, wantWarn: true},
		{name: "open, BURSAR_NATS_INSECURE", env: "true", args: []string{"--nats", open}, wantWarn: true},
		{name: "open, BURSAR_NATS_INSECURE=false", env: "false", args: []string{"--nats", open}, wantErr: "--nats-insecure"},
		{name: "secured", args: []string{"--nats", secured.Server.ClientURL(), "--nats-nkey", seed}},
		{name: "secured, --nats-insecure changes nothing", args: []string{"--nats", secured.Server.ClientURL(), "--nats-nkey", seed, "--nats-insecure"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.env != "" {
				t.Setenv("BURSAR_NATS_INSECURE", tt.env)
			}
			log, err := dialWith(t, tt.args...)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Dial: %v, want an error containing %q", err, tt.wantErr)
			}
			if warned := strings.Contains(log, "--nats-insecure"); warned != tt.wantWarn {
				t.Errorf("warned = %v, want %v; log:\n%s", warned, tt.wantWarn, log)
			}
		})
	}
}

// TestInsecureIsWarnedOnce: a program that dials again and again (report serve's readiness
// check) says once that it accepted a server without authentication, not at every probe.
func TestInsecureIsWarnedOnce(t *testing.T) {
	url := clitest.OpenNATS(t).ClientURL()
	g := &cli.Globals{NATS: url, Auth: cli.NATSAuth{Insecure: true}}
	var log bytes.Buffer
	l := slog.New(slog.NewTextHandler(&log, nil))
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		nc, _, err := g.Dial(ctx, "", bus.RoleReport, "test", l)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		nc.Close()
	}
	if n := strings.Count(log.String(), "--nats-insecure"); n != 1 {
		t.Errorf("warned %d times, want once:\n%s", n, log.String())
	}
}
