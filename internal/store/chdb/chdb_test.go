package chdb

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestMissingLibrarySaysHowToGetIt(t *testing.T) {
	_, err := bind(filepath.Join(t.TempDir(), "libchdb.so"))
	if !errors.Is(err, ErrLibraryMissing) {
		t.Fatalf("bind(missing) = %v, want ErrLibraryMissing", err)
	}
	for _, want := range []string{"make setup", "BURSAR_CHDB_LIB"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestNotALibrarySaysHowToReinstall(t *testing.T) {
	p := filepath.Join(t.TempDir(), "libchdb.so")
	if err := os.WriteFile(p, []byte("not an ELF file"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := bind(p)
	if !errors.Is(err, ErrLibraryMissing) || !strings.Contains(err.Error(), "make setup") {
		t.Fatalf("bind(garbage) = %v, want ErrLibraryMissing naming make setup", err)
	}
}

func TestLibraryPath(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"explicit", map[string]string{"BURSAR_CHDB_LIB": "/opt/libchdb.so"}, "/opt/libchdb.so"},
		{"cache dir", map[string]string{"BURSAR_CACHE_DIR": "/c"}, "/c/chdb/" + Version + "/libchdb.so"},
		{"xdg", map[string]string{"XDG_CACHE_HOME": "/x"}, "/x/bursar/chdb/" + Version + "/libchdb.so"},
		{"home", map[string]string{"HOME": "/h"}, "/h/.cache/bursar/chdb/" + Version + "/libchdb.so"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"BURSAR_CHDB_LIB", "BURSAR_CACHE_DIR", "XDG_CACHE_HOME"} {
				t.Setenv(k, "")
			}
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			if got := LibraryPath(); got != tc.want {
				t.Errorf("LibraryPath() = %q, want %q", got, tc.want)
			}
		})
	}
}

// The Go code and scripts/setup-chdb.sh must agree on the version, or tests would look for the
// library where the script never puts it.
func TestVersionMatchesSetupScript(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "..", "scripts", "setup-chdb.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^CHDB_VERSION=(\S+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("scripts/setup-chdb.sh has no CHDB_VERSION= line")
	}
	if string(m[1]) != Version {
		t.Fatalf("setup-chdb.sh pins %s, chdb.Version is %s", m[1], Version)
	}
}

const holdEnv = "BURSAR_TEST_HOLD_LOCK"

// TestHelperHoldLock is not a test: run by TestSecondOwnerGetsOwnedError in a child process, it
// takes the lock and holds it until killed.
func TestHelperHoldLock(t *testing.T) {
	path := os.Getenv(holdEnv)
	if path == "" {
		t.Skip("helper process only")
	}
	if _, err := acquire(path, "arbiter run"); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("locked\n")
	time.Sleep(time.Minute)
}

func TestSecondOwnerGetsOwnedError(t *testing.T) {
	lock := filepath.Join(t.TempDir(), "clickhouse.lock")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldLock$")
	cmd.Env = append(os.Environ(), holdEnv+"="+lock)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	buf := make([]byte, 7)
	if _, err := out.Read(buf); err != nil || string(buf) != "locked\n" {
		t.Fatalf("helper did not take the lock: %q %v", buf, err)
	}

	_, err = acquire(lock, "report")
	var owned *OwnedError
	if !errors.As(err, &owned) {
		t.Fatalf("second acquire = %v, want *OwnedError", err)
	}
	if owned.Owner.PID != cmd.Process.Pid || owned.Owner.Program != "arbiter run" {
		t.Errorf("owner = %+v, want arbiter run with pid %d", owned.Owner, cmd.Process.Pid)
	}
	for _, want := range []string{`"arbiter run"`, "pid " + strconv.Itoa(cmd.Process.Pid), strings.TrimSuffix(lock, ".lock")} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}

	// The kernel drops the lock with the process: the store is free again, no stale owner.
	cmd.Process.Kill()
	cmd.Wait()
	l, err := acquire(lock, "report")
	if err != nil {
		t.Fatalf("acquire after the owner died = %v", err)
	}
	l.Release()
}
