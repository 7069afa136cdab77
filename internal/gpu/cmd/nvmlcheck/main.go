// Command nvmlcheck reads this machine's GPUs once through the collector's NVML adapter and
// prints the raw readings and the gpu.sample events they become, as JSON. It is the manual check
// on a GPU host:
//
//	CGO_CFLAGS="-O2 -g -Wno-deprecated-declarations" go run -tags nvml ./internal/gpu/cmd/nvmlcheck
//
// It exits 2 when NVML is unavailable (no driver) and 1 on any other failure.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/gpu"
)

type collect struct {
	mu  sync.Mutex
	got []events.Event
}

func (c *collect) PublishBatch(_ context.Context, evs []events.Event) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, evs...)
	return nil
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "nvmlcheck:", err)
		if errors.Is(err, gpu.ErrUnavailable) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	r, err := gpu.OpenNVML()
	if err != nil {
		return err
	}
	defer r.Close()
	stats, readErr := r.Read(ctx)
	pub := &collect{}
	c, err := gpu.New(gpu.Config{Location: "nvmlcheck"}, gpu.Deps{Publisher: pub, Open: func() (gpu.Reader, error) { return r, nil }})
	if err != nil {
		return err
	}
	_, collectErr := c.Collect(ctx, r)
	out := map[string]any{"stats": stats, "samples": pub.got}
	if err := errors.Join(readErr, collectErr); err != nil {
		out["error"] = err.Error()
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	return errors.Join(readErr, collectErr)
}
