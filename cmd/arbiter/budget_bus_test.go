package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/cli"
)

// budgetBus is a real NATS server whose budget writers are real identities: the embedded
// server's budget role and, as an operator's cluster gives each person, a password user per
// person with the budget permissions for its own name.
type budgetBus struct {
	*bustest.Env
	passwordFiles map[string]string
}

func startBudgetBus(t *testing.T, people ...string) *budgetBus {
	t.Helper()
	b := &budgetBus{passwordFiles: map[string]string{}}
	dir := t.TempDir()
	var users []bus.User
	for _, p := range people {
		pw := rand.Text()
		file := filepath.Join(dir, p+".pw")
		if err := os.WriteFile(file, []byte(pw+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		b.passwordFiles[p] = file
		users = append(users, bus.User{Role: bus.RoleBudget, Name: p, Password: pw, Permissions: bus.BudgetPermissions(p)})
	}
	b.Env = bustest.StartWith(t, users...)
	return b
}

// serveBudgetWrites answers budget writes as the arbiter does (budget.ServeAdmin), for tests
// of the CLI that run no arbiter.
func serveBudgetWrites(t *testing.T, env *bustest.Env) {
	t.Helper()
	ctx := context.Background()
	s, err := budget.OpenStore(ctx, env.JS)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := budget.ServeAdmin(ctx, env.Conn, s, time.Now, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
}

// cli runs "arbiter ARGS..." as main wires it, connected as "as": the budget role with the key
// the embedded server wrote, or one of the people with its password file.
func (b *budgetBus) cli(t *testing.T, as string, args ...string) (string, error) {
	t.Helper()
	var g cli.Globals
	root := cli.Root("arbiter", "", "", &g, "", "")
	root.AddCommand(newBudgetCmd(&g))
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	auth := []string{"--nats-nkey", bus.SeedFile(b.CredsDir, bus.RoleBudget)}
	if as != bus.RoleBudget {
		auth = []string{"--nats-user", as, "--nats-password-file", b.passwordFiles[as]}
	}
	root.SetArgs(append(append([]string{"--nats", b.Server.ClientURL(), "--log-level", "error"}, auth...), args...))
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

// mustCLI is cli that fails the test on an error.
func (b *budgetBus) mustCLI(t *testing.T, as string, args ...string) string {
	t.Helper()
	out, err := b.cli(t, as, args...)
	if err != nil {
		t.Fatalf("arbiter %v as %s: %v\n%s", args, as, err, out)
	}
	return out
}
