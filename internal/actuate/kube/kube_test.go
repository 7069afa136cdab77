package kube_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/kube"
	"github.com/bursar-dev/bursar/internal/actuate/kube/kubetest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
)

const fleetYAML = `locations:
  - {name: use1, provider: aws, region: us-east-1, actuator: {kind: kubernetes, context: eks-use1, namespace: inference}}
workloads:
  - name: chat
    gpu: {models: [H100-80GB], count: 1}
    replicas: {min: 1}
    markets: [spot, on_demand]
    kubernetes: {spot: chat-spot, on_demand: chat-od}
`

func deployment(name string, replicas, ready int32) *appsv1.Deployment {
	return kubetest.Deployment("inference", name, replicas, ready)
}

func setup(t *testing.T, c *kubetest.Cluster) *kube.Actuator {
	t.Helper()
	cfg, err := fleet.Parse([]byte(fleetYAML), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return kube.New(cfg, map[string]kubernetes.Interface{"use1": c}, kube.Options{NodeWait: nodeWait, Now: func() time.Time { return now }})
}

func group(m events.Market) actuate.Group {
	return actuate.Group{Workload: "chat", Location: "use1", Market: m}
}

func TestScale(t *testing.T) {
	tests := []struct {
		name        string
		market      events.Market
		replicas    int
		conflicts   int
		wantErr     string
		wantSpot    int
		wantUpdates int
	}{
		{"sets the spot deployment", events.Spot, 5, 0, "", 5, 1},
		{"the same count writes nothing", events.Spot, 2, 0, "", 2, 0},
		{"a conflict is retried on a fresh read", events.Spot, 4, 2, "", 4, 1},
		{"on-demand is its own deployment", events.OnDemand, 3, 0, "Deployment inference/chat-od in location use1 does not exist", 2, 0},
		{"no object for the market", events.Reserved, 1, 0, "names no object for market reserved", 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := kubetest.New(deployment("chat-spot", 2, 2))
			c.FailNextUpdates(tt.conflicts)
			a := setup(t, c)
			err := a.Scale(context.Background(), actuate.Target{ActionID: "x", Group: group(tt.market), Replicas: tt.replicas})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, actuate.ErrNotFound) {
					t.Fatalf("err = %v, want ErrNotFound saying %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			got, err := a.Desired(context.Background(), group(events.Spot))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.wantSpot || c.Updates() != tt.wantUpdates {
				t.Errorf("spot desired = %d after %d updates, want %d after %d", got, c.Updates(), tt.wantSpot, tt.wantUpdates)
			}
		})
	}
}

func TestConflictsThatNeverEndFail(t *testing.T) {
	c := kubetest.New(deployment("chat-spot", 2, 2))
	c.FailNextUpdates(100)
	err := setup(t, c).Scale(context.Background(), actuate.Target{Group: group(events.Spot), Replicas: 3})
	if !apierrors.IsConflict(errors.Unwrap(err)) && !strings.Contains(err.Error(), "modified") {
		t.Errorf("err = %v, want the conflict", err)
	}
}

func TestObserveReportsReadyReplicas(t *testing.T) {
	c := kubetest.New(deployment("chat-spot", 3, 2), deployment("chat-od", 1, 1))
	obs, err := setup(t, c).Observe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[events.Market][2]int{events.Spot: {3, 2}, events.OnDemand: {1, 1}}
	if len(obs) != len(want) {
		t.Fatalf("observed %+v, want two groups", obs)
	}
	for _, o := range obs {
		if w := want[o.Market]; o.Desired != w[0] || o.Ready != w[1] || o.Location != "use1" || o.Workload != "chat" {
			t.Errorf("observed %+v, want desired %d ready %d", o, w[0], w[1])
		}
	}
}
