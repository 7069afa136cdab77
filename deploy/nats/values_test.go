// Package nats_test checks deploy/nats/values.yaml, the official NATS chart's values that
// docs/deploy.md's first step installs: the accounts it gives the server are Bursar's, and a
// server configured as the chart configures it requires authentication and lets each role in.
package nats_test

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"sigs.k8s.io/yaml"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/cli"
)

// chartValues is the part of deploy/nats/values.yaml this test reads.
type chartValues struct {
	Config struct {
		Jetstream struct {
			Enabled bool `json:"enabled"`
		} `json:"jetstream"`
		Merge map[string]any `json:"merge"`
	} `json:"config"`
	ConfigMap struct {
		Merge struct {
			Data map[string]string `json:"data"`
		} `json:"merge"`
	} `json:"configMap"`
}

// includes are the files the chart's nats.conf includes: the values of config.merge's keys
// that end in $include, which the chart turns into include directives.
func (v chartValues) includes() []string {
	var files []string
	for k, f := range v.Config.Merge {
		if s, ok := f.(string); ok && strings.HasSuffix(k, "$include") {
			files = append(files, s)
		}
	}
	return files
}

var update = flag.Bool("update", false, "copy accounts.conf into values.yaml")

// accountsBlock starts the block of values.yaml that holds accounts.conf, to the file's end.
const accountsBlock = "      bursar-accounts.conf: |\n"

// TestValuesIncludeBursarsAccounts: the NATS chart's values turn JetStream on and include
// accounts.conf as it is, and a server configured so refuses anonymous clients. After
// accounts.conf changes (go test ./internal/bus -run TestDeployedAccounts -update),
// go test ./deploy/nats -update copies it here.
func TestValuesIncludeBursarsAccounts(t *testing.T) {
	b, err := os.ReadFile("values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		b = copyAccounts(t, b)
	}
	var v chartValues
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("accounts.conf")
	if err != nil {
		t.Fatal(err)
	}
	inc := v.includes()
	if len(inc) != 1 || !v.Config.Jetstream.Enabled {
		t.Fatalf("config: includes %v, JetStream %v; want accounts.conf's one include, JetStream on", inc, v.Config.Jetstream.Enabled)
	}
	if got := v.ConfigMap.Merge.Data[inc[0]]; got != string(want) {
		t.Fatalf("values.yaml's configMap.merge.data[%q] is not accounts.conf: run go test ./deploy/nats -update", inc[0])
	}
	startAsTheChartDoes(t, inc[0], string(want))
}

// startAsTheChartDoes starts a nats-server on a configuration like the one the chart writes (its
// own settings, then the include of the accounts file beside it), with the roles' public nkeys
// in its environment as --set container.env gives them, and checks what docs/deploy.md
// promises: a client without credentials is refused, each role gets in with its seed, and the
// programs' check (cli.Globals.CheckServerAuth) accepts the server.
func startAsTheChartDoes(t *testing.T, name, accounts string) {
	t.Helper()
	dir := t.TempDir()
	seeds := map[string]string{}
	for _, role := range bus.Roles {
		kp, err := nkeys.CreateUser()
		if err != nil {
			t.Fatal(err)
		}
		pub, _ := kp.PublicKey()
		seed, _ := kp.Seed()
		t.Setenv("BURSAR_"+strings.ToUpper(role)+"_NKEY", pub)
		seeds[role] = filepath.Join(dir, role+".nk")
		// as docs/deploy.md writes it: nk's first line, with its newline
		if err := os.WriteFile(seeds[role], append(seed, '\n'), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	conf := filepath.Join(dir, "nats.conf")
	if err := os.WriteFile(filepath.Join(dir, name), []byte(accounts), 0o600); err != nil {
		t.Fatal(err)
	}
	main := "host: 127.0.0.1\nport: -1\njetstream {store_dir: " + filepath.Join(dir, "js") + "}\ninclude " + name + ";\n"
	if err := os.WriteFile(conf, []byte(main), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(conf)
	if err != nil {
		t.Fatalf("the server refuses the configuration: %v", err)
	}
	opts.NoLog, opts.NoSigs = true, true
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })

	if nc, err := nats.Connect(s.ClientURL()); err == nil {
		nc.Close()
		t.Error("a client without credentials got in")
	}
	for _, role := range []string{bus.RoleArbiter, bus.RoleCollector, bus.RoleReport} {
		g := &cli.Globals{NATS: s.ClientURL(), Auth: cli.NATSAuth{Nkey: seeds[role]}}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		nc, _, err := g.Dial(ctx, "", role, "test-"+role, slog.New(slog.DiscardHandler))
		cancel()
		if err != nil {
			t.Errorf("%s with its seed: %v", role, err)
			continue
		}
		nc.Close()
	}
}

// copyAccounts writes accounts.conf into values.yaml's block for it and returns the new file.
func copyAccounts(t *testing.T, values []byte) []byte {
	t.Helper()
	i := strings.Index(string(values), accountsBlock)
	if i < 0 {
		t.Fatalf("values.yaml has no %q block to copy accounts.conf into", strings.TrimSpace(accountsBlock))
	}
	conf, err := os.ReadFile("accounts.conf")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	out.WriteString(string(values[:i]) + accountsBlock)
	for _, line := range strings.SplitAfter(string(conf), "\n") {
		if strings.TrimSpace(line) != "" {
			out.WriteString("        ")
		}
		out.WriteString(line)
	}
	if err := os.WriteFile("values.yaml", []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return []byte(out.String())
}
