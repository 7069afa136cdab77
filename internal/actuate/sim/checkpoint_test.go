package sim_test

import (
	"context"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
)

// TestCheckpointIsRecordedAndChangesNoCount: a checkpoint request (there was none: the sim took
// every Target as a count to set, so a checkpoint with Replicas 0 would have stopped the job)
// is recorded and leaves what runs as it was.
func TestCheckpointIsRecordedAndChangesNoCount(t *testing.T) {
	ctx := context.Background()
	f, c := setup(t)
	if err := f.Scale(ctx, actuate.Target{ActionID: "1", Group: spot, Replicas: 1}); err != nil {
		t.Fatal(err)
	}
	c.now = c.now.Add(time.Minute)
	cp := actuate.Target{ActionID: "2", Group: spot, Kind: actuate.KindCheckpoint}
	if err := f.Scale(ctx, cp); err != nil {
		t.Fatal(err)
	}
	if n, _ := f.Desired(ctx, spot); n != 1 {
		t.Errorf("desired = %d after a checkpoint, want 1", n)
	}
	if o := observe(t, f); o.Ready != 1 {
		t.Errorf("ready = %d after a checkpoint, want 1", o.Ready)
	}
	got := f.Checkpoints()
	if len(got) != 1 || got[0].Target != cp || !got[0].At.Equal(c.now) {
		t.Errorf("Checkpoints = %+v, want the one request at %v", got, c.now)
	}
}
