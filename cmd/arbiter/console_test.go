package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/console"
)

func TestConsoleTokenPrintsItOnceAndKeepsItsHash(t *testing.T) {
	g := &cli.Globals{DataDir: t.TempDir()}
	cmd := newConsoleCmd(g)
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs([]string{"token", "--as", "U0123ABC"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(out.String())
	if token == "" || strings.Contains(token, "\n") || !strings.Contains(errOut.String(), "Log in to approve") {
		t.Errorf("stdout %q, stderr %q: want the token alone on stdout and how to log in on stderr", out.String(), errOut.String())
	}
	data, err := os.ReadFile(filepath.Join(g.DataDir, console.TokensFile))
	if err != nil || !strings.HasPrefix(string(data), "U0123ABC ") || strings.Contains(string(data), token) {
		t.Errorf("tokens file %q, %v: want U0123ABC's hash, not the token", data, err)
	}
	cmd = newConsoleCmd(g)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs([]string{"token", "--as", "two words"})
	if err := cmd.Execute(); err == nil {
		t.Error("an identity with a space was accepted")
	}
}
