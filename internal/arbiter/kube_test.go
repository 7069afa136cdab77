package arbiter_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/kube"
	"github.com/bursar-dev/bursar/internal/actuate/kube/kubetest"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/placement"
)

// kubeFleet is two one-replica workloads on spot in one EKS cluster.
const kubeFleet = `locations:
  - {name: a, provider: aws, region: us-east-1, zones: [us-east-1a], egress_per_gb: 0.09, actuator: {kind: kubernetes, context: eks-a, namespace: inference}}
workloads:
  - name: batch
    gpu: {models: [H100-80GB], count: 1}
    replicas: {min: 1, max: 1}
    markets: [spot]
    weights_gb: 50
    cold_start: 30s
    kubernetes: {spot: batch-spot}
  - name: chat
    gpu: {models: [H100-80GB], count: 1}
    replicas: {min: 1, max: 1}
    markets: [spot]
    weights_gb: 50
    cold_start: 30s
    kubernetes: {spot: chat-spot}
`

// A reclaim notice names an EC2 instance; the kube actuator says which pods run on the node that
// instance backs, so the notice takes that workload's replica (every workload's, where a node runs
// several: it went to one of them), and a notice for an instance none of the workloads runs on
// takes nothing (it was guessed onto the first workload in name order).
func TestKubeNoticeReachesTheWorkloadOnItsInstance(t *testing.T) {
	tests := []struct {
		name         string
		instance     string
		shared       bool // both pods on the batch node
		wantReclaims map[string]int
	}{
		{"the instance's workload", "i-0chat", false, map[string]int{"chat": 1, "batch": 0}},
		{"another instance's workload", "i-0batch", false, map[string]int{"chat": 0, "batch": 1}},
		{"an instance no workload runs on", "i-0other", false, map[string]int{"chat": 0, "batch": 0}},
		{"a node both workloads run on", "i-0batch", true, map[string]int{"chat": 1, "batch": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			h := newHarness(t, kubeFleet)
			c := kubetest.New(kubetest.Deployment("inference", "batch-spot", 0, 0), kubetest.Deployment("inference", "chat-spot", 0, 0))
			act := kube.New(h.cfg, map[string]kubernetes.Interface{"a": c}, kube.Options{Now: h.clock.Now})
			offer := h.price("us-east-1a", events.Spot, 1.0)
			r := h.start("a1", func(o *arbiter.Options) { o.Actuator = actuate.Router{"a": act} })
			eventually(t, "the arbiter leads", r.Leading)
			eventually(t, "the price is folded", func() bool { return r.KnowsPrice(offer, 1.0) })
			h.settle(ctx, r)
			for _, w := range []string{"batch", "chat"} {
				if n, err := act.Desired(ctx, actuate.Group{Workload: w, Location: "a", Market: events.Spot}); err != nil || n != 1 {
					t.Fatalf("%s-spot scaled to %d (%v), want 1", w, n, err)
				}
			}
			// The ReplicaSet controller, the scheduler and the kubelet: each pod on its own node.
			must(t, c.RunReady("inference", "batch-spot", "batch-1", "ip-10-0-1-2.ec2.internal", "aws:///us-east-1a/i-0batch"))
			chatNode, chatID := "ip-10-0-3-4.ec2.internal", "aws:///us-east-1a/i-0chat"
			if tt.shared {
				chatNode, chatID = "ip-10-0-1-2.ec2.internal", "aws:///us-east-1a/i-0batch"
			}
			must(t, c.RunReady("inference", "chat-spot", "chat-1", chatNode, chatID))
			h.settle(ctx, r)

			now := h.clock.Now()
			n := &events.CapacityReclaimed{Meta: events.Meta{At: now}, Provider: "aws", Region: "us-east-1", Zone: "us-east-1a",
				Location: "a", Instance: tt.instance, Kind: events.ReclaimInterruption, NoticeAt: now,
				Deadline: now.Add(2 * time.Minute), Source: "test"}
			must(t, h.pub.Publish(ctx, n))
			eventually(t, "the notice is folded", func() bool { return r.KnowsNotice(n.ID) })
			h.settle(ctx, r)
			for w, want := range tt.wantReclaims {
				got := 0
				for _, rep := range r.Books()[w].Replicas {
					if rep.State == placement.StateReclaimed {
						got++
					}
				}
				if got != want {
					t.Errorf("%s has %d replicas reclaimed, want %d; books: %+v", w, got, want, r.Books()[w].Replicas)
				}
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A pod the scheduler leaves Unschedulable past the node wait is a launch with no capacity: the
// arbiter gives it up (launch_failed, its Deployment scaled back) instead of waiting on it.
func TestKubeUnschedulablePodIsGivenUp(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, kubeFleet)
	failed := h.watchLaunchFailed(t)
	c := kubetest.New(kubetest.Deployment("inference", "batch-spot", 0, 0), kubetest.Deployment("inference", "chat-spot", 0, 0))
	act := kube.New(h.cfg, map[string]kubernetes.Interface{"a": c}, kube.Options{NodeWait: time.Minute, Now: h.clock.Now})
	offer := h.price("us-east-1a", events.Spot, 1.0)
	r := h.start("a1", func(o *arbiter.Options) { o.Actuator = actuate.Router{"a": act} })
	eventually(t, "the arbiter leads", r.Leading)
	eventually(t, "the price is folded", func() bool { return r.KnowsPrice(offer, 1.0) })
	h.settle(ctx, r)
	must(t, c.RunReady("inference", "batch-spot", "batch-1", "ip-10-0-1-2.ec2.internal", "aws:///us-east-1a/i-0batch"))
	must(t, c.Tracker().Add(kubetest.Pod("inference", "chat-1", "chat-spot", kubetest.PodState{UnschedulableSince: h.clock.Now()})))
	h.clock.Advance(30 * time.Second) // within the node wait: a node may still come
	h.settle(ctx, r)
	if len(failed) > 0 {
		t.Fatal("a launch was given up within the node wait")
	}
	h.clock.Advance(31 * time.Second)
	h.settle(ctx, r)
	eventually(t, "launch_failed is announced", func() bool { return len(failed) > 0 })
	if e := <-failed; e.Workload != "chat" || e.Location != "a" {
		t.Errorf("gave up %s at %s, want chat's launch at a", e.Workload, e.Location)
	}
	for _, rep := range r.Books()["batch"].Replicas {
		if rep.State != placement.StateReady {
			t.Errorf("batch replica %s is %s, want ready: only chat's pod is unschedulable", rep.ID, rep.State)
		}
	}
}
