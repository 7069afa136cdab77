package soak

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// trace is AWS1 from the shared data, or a skip.
func trace(t *testing.T) string {
	dir := filepath.Join("..", "..", "..", "shared", "data", "traces", "skyserve", "AWS1")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("the soak replays AWS1 from ../shared/data (%v)", err)
	}
	return dir
}

// TestSoakShortSeed is the CI seed: 12 hours of market with every fault once.
func TestSoakShortSeed(t *testing.T) {
	if testing.Short() {
		t.Skip("the soak takes a minute or two")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	log := slog.New(slog.DiscardHandler)
	if os.Getenv("SOAK_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	s, err := Run(ctx, Options{Trace: trace(t), Market: 12 * time.Hour, Seed: 1, Engine: storetest.Engine(t),
		Dir: t.TempDir(), Log: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(s.Line())
	t.Log("\n" + s.Markdown())
	if err := s.Err(); err != nil {
		t.Error(err)
	}
}
