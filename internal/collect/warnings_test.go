package collect

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/testkit"
)

// dupRow repeats writeCatalog's p5.48xlarge row (line 2) at a lower on-demand price (line 3).
const dupRow = "p5.48xlarge,H100,8,90.5,,us-east-1,use1-az1"

// TestDuplicateRowsAreReported: two rows for one offer at different prices used to collapse
// silently; `collector prices` prints which row won, and `collector run` logs it.
func TestDuplicateRowsAreReported(t *testing.T) {
	path := writeCatalog(t, dupRow)
	want := []string{"duplicate offer aws|us-east-1|use1-az1|p5.48xlarge|on_demand|H100-80GB|8",
		path + ":2 at 98.32 USD/h", path + ":3 at 90.5 USD/h", "kept the lower price (" + path + ":3)"}

	t.Run("prices", func(t *testing.T) {
		var out, errOut bytes.Buffer
		if err := Prices(context.Background(), PricesOptions{Files: []string{path}, Output: "csv"}, t0, &out, &errOut); err != nil {
			t.Fatal(err)
		}
		for _, w := range append(want, "warning: ") {
			if !strings.Contains(errOut.String(), w) {
				t.Errorf("stderr %q does not say %q", errOut.String(), w)
			}
		}
		if !strings.Contains(out.String(), "90.5") || strings.Contains(out.String(), "98.32") {
			t.Errorf("offers = %s, want the lower on-demand price only", out.String())
		}
	})
	t.Run("run", func(t *testing.T) {
		env := bustest.Start(t)
		var log testkit.Log
		c := New(bus.NewPublisher(env.JS), slog.New(slog.NewTextHandler(&log, nil)), nil)
		src, err := SourceConfig{Kind: "skypilot", Files: []string{path}}.Build(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.RunOnce(context.Background(), Job{Source: src}, t0, true); err != nil {
			t.Fatal(err)
		}
		for _, w := range append(want, "level=WARN") {
			if !strings.Contains(log.String(), w) {
				t.Errorf("log %q does not say %q", log.String(), w)
			}
		}
	})
}
