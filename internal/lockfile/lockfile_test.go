package lockfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestASecondHolderIsToldWhoHoldsIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	l, err := Acquire(path, "arbiter run", 0o600)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(path, "report", 0o600)
	var held *HeldError
	if !errors.As(err, &held) {
		t.Fatalf("second Acquire: %v, want a *HeldError", err)
	}
	if held.Owner.Program != "arbiter run" || held.Owner.PID != os.Getpid() {
		t.Errorf("owner %+v, want arbiter run, pid %d", held.Owner, os.Getpid())
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	l2, err := Acquire(path, "report", 0o600)
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	l2.Release()
}
