package arbiter

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// A worker's queue takes every workload a pass queues, however many, each once; a reclaim's
// replacement goes to the front.
func TestQueueKeepsEveryWorkloadOnceAndReplacementsFirst(t *testing.T) {
	q := newQueue()
	var want []string
	for i := range 5000 { // more than the 1,024 the old channel held
		w := fmt.Sprintf("w%04d", i)
		q.push(w, false)
		q.push(w, false) // queued twice, runs once
		want = append(want, w)
	}
	q.push("w4000", true)
	q.push("urgent", true)
	want = slices.Insert(slices.DeleteFunc(want, func(w string) bool { return w == "w4000" }), 0, "urgent", "w4000")
	var got []string
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // pop returns at once when empty
	for {
		w, ok := q.pop(ctx)
		if !ok {
			break
		}
		got = append(got, w)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("popped %d workloads, want %d; first %v, want %v", len(got), len(want), got[:3], want[:3])
	}
}
