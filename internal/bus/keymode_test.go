package bus_test

import (
	"os"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/bus"
)

// TestWideKeyModesAreRefused: a role key or its directory that others may read (0644 in 0755)
// is refused by the server's start and by a CLI that picks its key there, with the path, the
// mode and what to do.
func TestWideKeyModesAreRefused(t *testing.T) {
	for _, tt := range []struct {
		name          string
		dirMode, mode os.FileMode
		want          string
	}{
		{"private", 0o700, 0o600, ""},
		{"owner read-only key", 0o700, 0o400, ""},
		{"world-readable key", 0o700, 0o644, "report.nk has mode 0644"},
		{"group-readable key", 0o700, 0o640, "report.nk has mode 0640"},
		{"world-readable dir", 0o755, 0o600, "has mode 0755"},
		{"both", 0o755, 0o644, "has mode 0755"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir() + "/creds"
			if _, err := bus.LoadOrCreateKeys(dir); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(bus.SeedFile(dir, bus.RoleReport), tt.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, tt.dirMode); err != nil {
				t.Fatal(err)
			}
			_, serr := bus.LoadOrCreateKeys(dir)
			_, cerr := bus.Auth{Role: bus.RoleReport, DefaultCreds: dir}.Options()
			for _, err := range []error{serr, cerr} {
				if tt.want == "" {
					if err != nil {
						t.Fatalf("refused a private key: %v", err)
					}
					continue
				}
				if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "chmod") {
					t.Fatalf("error %v, want one that says %q and how to fix it", err, tt.want)
				}
			}
		})
	}
}
