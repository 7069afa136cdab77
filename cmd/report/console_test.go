package main

import (
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/cli"
)

// report console refuses what it cannot serve safely before it opens the history.
func TestConsoleRefusesBadAddresses(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"console", "--console-listen", ""}, "--console-listen: give an address"},
		{[]string{"console", "--console-listen", "0.0.0.0:9471"}, "--console-tls-cert"},
		{[]string{"console", "--console-trusted-header", "X-Forwarded-Email"}, "--console-trusted-proxy"},
	} {
		root := newRoot(&cli.Globals{})
		root.SetArgs(append(tt.args, "--data-dir", t.TempDir(), "--fleet", ""))
		err := root.Execute()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("report %v = %v, want an error naming %q", tt.args, err, tt.want)
		}
	}
}
