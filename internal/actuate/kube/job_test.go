package kube_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/kube"
	"github.com/bursar-dev/bursar/internal/actuate/kube/kubetest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
)

const jobFleetYAML = `locations:
  - {name: use1, provider: aws, region: us-east-1, actuator: {kind: kubernetes, context: eks-use1, namespace: train}}
workloads:
  - name: tune
    kind: job
    gpu: {models: [H100-80GB], count: 1}
    markets: [spot, on_demand]
    job: {work: 4h, deadline_in: 8h}
    kubernetes: {spot: tune-spot, on_demand: tune-od}
`

func jobSetup(t *testing.T, c *kubetest.Cluster) *kube.Actuator {
	t.Helper()
	cfg, err := fleet.Parse([]byte(jobFleetYAML), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return kube.New(cfg, map[string]kubernetes.Interface{"use1": c}, kube.Options{Now: func() time.Time { return now }})
}

// TestJobStartsStopsAndCheckpointsThroughItsJob: a job's group is a batch/v1 Job (there was no
// Job support: its kind was refused and a scale went to a Deployment that does not exist):
// starting unsuspends it, stopping suspends it, Desired and Observe read it back, and a
// checkpoint annotates it with the request's time and leaves it running.
func TestJobStartsStopsAndCheckpointsThroughItsJob(t *testing.T) {
	ctx := context.Background()
	c := kubetest.New(kubetest.Job("train", "tune-spot", true, 0), kubetest.Job("train", "tune-od", true, 0))
	a := jobSetup(t, c)
	spot := actuate.Group{Workload: "tune", Location: "use1", Market: events.Spot}
	suspended := func(name string) bool {
		j, err := c.BatchV1().Jobs("train").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return *j.Spec.Suspend
	}
	steps := []struct {
		name          string
		target        actuate.Target
		wantSuspended bool
		wantDesired   int
	}{
		{"start", actuate.Target{ActionID: "1", Group: spot, Replicas: 1, Kind: "launch"}, false, 1},
		{"checkpoint", actuate.Target{ActionID: "2", Group: spot, Replicas: 1, Kind: actuate.KindCheckpoint}, false, 1},
		{"stop", actuate.Target{ActionID: "3", Group: spot, Replicas: 0, Kind: "drain"}, true, 0},
	}
	for _, st := range steps {
		if err := a.Scale(ctx, st.target); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := suspended("tune-spot"); got != st.wantSuspended {
			t.Errorf("%s: suspended = %v, want %v", st.name, got, st.wantSuspended)
		}
		if n, err := a.Desired(ctx, spot); err != nil || n != st.wantDesired {
			t.Errorf("%s: Desired = %d, %v, want %d", st.name, n, err, st.wantDesired)
		}
	}
	j, _ := c.BatchV1().Jobs("train").Get(ctx, "tune-spot", metav1.GetOptions{})
	if got := j.Annotations[kube.AnnotationCheckpoint]; got != now.UTC().Format(time.RFC3339) {
		t.Errorf("checkpoint annotation = %q, want the request's time %s", got, now.UTC().Format(time.RFC3339))
	}
	if !suspended("tune-od") {
		t.Error("the on-demand Job was started by a spot action")
	}
	obs, err := a.Observe(ctx)
	if err != nil || len(obs) != 2 || obs[0].Desired != 0 || obs[1].Desired != 0 {
		t.Errorf("Observe = %+v, %v, want both Jobs suspended", obs, err)
	}
}
