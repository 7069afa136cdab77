package chdb

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func openForTest(t *testing.T, dir string) *Engine {
	t.Helper()
	e, err := Open(dir, "chdb test")
	if errors.Is(err, ErrLibraryMissing) {
		t.Fatalf("%v", err) // fail, not skip: CI must run against the real engine
	}
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestEngineLifecycle(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e := openForTest(t, dir)

	out, err := e.Query(ctx, []byte("SELECT 40 + 2 AS n"), "JSONEachRow")
	if err != nil || strings.TrimSpace(string(out)) != `{"n":42}` {
		t.Fatalf("query = %q, %v", out, err)
	}
	_, err = e.Query(ctx, []byte("SELECT nope()"), "")
	var qe *QueryError
	if !errors.As(err, &qe) || !strings.Contains(qe.Message, "Code: 46") {
		t.Fatalf("bad query error = %v, want a QueryError with code 46", err)
	}

	// A Go nil dereference must still be a recoverable panic once libchdb is loaded: its signal
	// handlers must not replace the runtime's.
	func() {
		defer func() {
			if recover() == nil {
				t.Error("nil dereference did not panic")
			}
		}()
		var p *int
		_ = *p
	}()

	if _, err := Open(t.TempDir(), "second"); err == nil || !strings.Contains(err.Error(), "already has it open") {
		t.Fatalf("second Open in one process = %v, want a refusal", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Query(ctx, []byte("SELECT 1"), ""); !errors.Is(err, ErrClosed) {
		t.Fatalf("query after close = %v, want ErrClosed", err)
	}
	if _, err := Open(t.TempDir(), "other path"); err == nil || !strings.Contains(err.Error(), "first data path") {
		t.Fatalf("Open with another path after close = %v, want a refusal", err)
	}
	e = openForTest(t, dir)
	defer e.Close()
	if _, err := e.Query(ctx, []byte("SELECT 1"), ""); err != nil {
		t.Fatalf("query after reopening: %v", err)
	}
}
