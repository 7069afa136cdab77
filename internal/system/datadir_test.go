package system

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDataDirLockIsExclusiveAndNamesItsHolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	first, err := LockDataDir(dir, "arbiter run")
	if err != nil {
		t.Fatal(err)
	}
	_, err = LockDataDir(dir, "arbiter run")
	var held *DataDirHeldError
	if !errors.As(err, &held) || held.Holder.PID != os.Getpid() || held.Holder.Program != "arbiter run" {
		t.Fatalf("second lock: %v, want the holder named", err)
	}
	if !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "--data-dir") {
		t.Errorf("the error names neither the dir nor what to do: %v", err)
	}
	// A holder record that does not decode still refuses, naming no one.
	if err := os.WriteFile(filepath.Join(dir, DataDirLockFile), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LockDataDir(dir, "x"); !errors.As(err, &held) || !strings.Contains(err.Error(), "another process") {
		t.Errorf("with an unreadable holder: %v", err)
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	again, err := LockDataDir(dir, "arbiter run")
	if err != nil {
		t.Fatalf("the lock was not released: %v", err)
	}
	_ = again.Release()
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("data dir mode %v (%v), want 0700", fi.Mode().Perm(), err)
	}
}
