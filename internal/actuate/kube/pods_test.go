package kube_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/kube"
	"github.com/bursar-dev/bursar/internal/actuate/kube/kubetest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
)

// now is the fake clock of the actuator under test, and nodeWait its wait for a node.
var (
	now      = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	nodeWait = 4 * time.Minute
)

func node(name, providerID string, annotations map[string]string) *corev1.Node {
	return kubetest.Node(name, providerID, annotations)
}

// podState is a pod's state, unschedulable saying for how long before now.
type podState struct {
	node          string
	ready         bool
	unschedulable time.Duration
	terminating   bool
}

func pod(name, app string, st podState) *corev1.Pod {
	return kubetest.Pod("inference", name, app, kubetest.PodState{Node: st.node, Ready: st.ready,
		UnschedulableSince: now.Add(-st.unschedulable), Terminating: st.terminating})
}

func TestObserveReportsInstancesAndPendingPods(t *testing.T) {
	nodes := []runtime.Object{
		node("ip-10-0-1-5.ec2.internal", "aws:///us-east-1a/i-0aaa", nil),
		node("ip-10-0-2-7.ec2.internal", "aws:///us-east-1b/i-0bbb", nil),
		node("od-node", "aws:///us-east-1a/i-0ccc", nil),
	}
	tests := []struct {
		name         string
		pods         []runtime.Object
		wantReady    []string
		wantStarting []string
		wantPending  int
	}{
		{
			name: "ready pods name their nodes and instances",
			pods: []runtime.Object{pod("s1", "chat-spot", podState{node: "ip-10-0-1-5.ec2.internal", ready: true}),
				pod("s2", "chat-spot", podState{node: "ip-10-0-2-7.ec2.internal", ready: true})},
			wantReady: []string{"i-0aaa", "i-0bbb"},
		},
		{
			name: "a pod not ready yet is starting on its node",
			pods: []runtime.Object{pod("s1", "chat-spot", podState{node: "ip-10-0-1-5.ec2.internal", ready: true}),
				pod("s2", "chat-spot", podState{node: "ip-10-0-2-7.ec2.internal"})},
			wantReady:    []string{"i-0aaa"},
			wantStarting: []string{"i-0bbb"},
		},
		{
			name: "unschedulable past the node wait is pending for capacity",
			pods: []runtime.Object{pod("s1", "chat-spot", podState{unschedulable: 5 * time.Minute}),
				pod("s2", "chat-spot", podState{unschedulable: nodeWait})},
			wantPending: 2,
		},
		{
			name:        "unschedulable within the node wait may still get a node",
			pods:        []runtime.Object{pod("s1", "chat-spot", podState{unschedulable: time.Minute})},
			wantPending: 0,
		},
		{
			name: "terminating pods and other objects' pods do not count",
			pods: []runtime.Object{pod("s1", "chat-spot", podState{node: "ip-10-0-1-5.ec2.internal", ready: true, terminating: true}),
				pod("s2", "chat-spot", podState{unschedulable: time.Hour, terminating: true}),
				pod("o1", "chat-od", podState{node: "od-node", ready: true})},
		},
		{
			name: "one instance per pod, the oldest pod first",
			pods: []runtime.Object{created(pod("a-new", "chat-spot", podState{node: "ip-10-0-1-5.ec2.internal", ready: true}), 1),
				created(pod("b-old", "chat-spot", podState{node: "ip-10-0-2-7.ec2.internal", ready: true}), 3),
				created(pod("c-mid", "chat-spot", podState{node: "ip-10-0-2-7.ec2.internal", ready: true}), 2)},
			wantReady: []string{"i-0bbb", "i-0bbb", "i-0aaa"},
		},
		{
			name:      "a node gone already is known by its name",
			pods:      []runtime.Object{pod("s1", "chat-spot", podState{node: "ip-10-0-9-9.ec2.internal", ready: true})},
			wantReady: []string{"ip-10-0-9-9.ec2.internal"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := append(slices.Clone(nodes), deployment("chat-spot", 2, 0))
			c := kubetest.New(append(objs, tt.pods...)...)
			obs, err := setup(t, c).Observe(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(obs) != 1 || obs[0].Market != events.Spot {
				t.Fatalf("observed %+v, want the spot group only", obs)
			}
			o := obs[0]
			if !slices.Equal(o.Instances, tt.wantReady) || !slices.Equal(o.Starting, tt.wantStarting) {
				t.Errorf("instances %q starting %q, want %q and %q", o.Instances, o.Starting, tt.wantReady, tt.wantStarting)
			}
			wantReason := ""
			if tt.wantPending > 0 {
				wantReason = actuate.ReasonNoCapacity
			}
			if o.Pending != tt.wantPending || o.Reason != wantReason {
				t.Errorf("pending %d (%q), want %d (%q)", o.Pending, o.Reason, tt.wantPending, wantReason)
			}
			if o.Instances == nil || o.Starting == nil {
				t.Errorf("instances %#v, starting %#v: want empty lists, not unknown", o.Instances, o.Starting)
			}
		})
	}
}

// created sets the pod's creation time, minutes before now.
func created(p *corev1.Pod, minutesAgo int) *corev1.Pod {
	p.CreationTimestamp = metav1.NewTime(now.Add(-time.Duration(minutesAgo) * time.Minute))
	return p
}

// A GKE node is known by its VM's numeric id, which GCP's metadata server (and so its preemption
// notice) names the instance by, not by the VM name in its providerID.
func TestObserveNamesGKEInstanceIDs(t *testing.T) {
	c := kubetest.New(deployment("chat-spot", 1, 1),
		node("gke-pool-1-abcd", "gce://proj/us-central1-a/gke-pool-1-abcd", map[string]string{"container.googleapis.com/instance_id": "4417051372"}),
		pod("s1", "chat-spot", podState{node: "gke-pool-1-abcd", ready: true}))
	obs, err := setup(t, c).Observe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"4417051372"}; len(obs) != 1 || !slices.Equal(obs[0].Instances, want) {
		t.Errorf("observed %+v, want instances %q", obs, want)
	}
}

func TestObserveWithoutSelectorSaysWhatToFix(t *testing.T) {
	d := deployment("chat-spot", 1, 1)
	d.Spec.Selector = nil
	_, err := setup(t, kubetest.New(d)).Observe(context.Background())
	if err == nil || !strings.Contains(err.Error(), "Deployment inference/chat-spot has no pod selector") {
		t.Errorf("err = %v, want it to name the Deployment without a selector", err)
	}
}

func TestInstanceID(t *testing.T) {
	tests := []struct {
		providerID, want string
	}{
		{"aws:///us-east-1a/i-0abc123", "i-0abc123"},
		{"aws://us-east-1a/i-0abc123", "i-0abc123"},
		{"gce://my-project/us-central1-a/gke-pool-1-abcd", "gke-pool-1-abcd"},
		{"azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/gpu-vm-1", "gpu-vm-1"},
		{"azure:///subscriptions/s/resourceGroups/mc_rg/providers/Microsoft.Compute/virtualMachineScaleSets/aks-gpu-123-vmss/virtualMachines/3", "aks-gpu-123-vmss_3"},
		{"kind://docker/kind/kind-worker", "kind-worker"},
		{"", ""},
		{"i-0abc123", ""},
		{"aws:///", ""},
		{"aws://", ""},
	}
	for _, tt := range tests {
		if got := kube.InstanceID(tt.providerID); got != tt.want {
			t.Errorf("InstanceID(%q) = %q, want %q", tt.providerID, got, tt.want)
		}
	}
}

// FuzzInstanceID: a providerID is whatever a cloud controller wrote; no input may panic, and an
// id is one path segment, never a path.
func FuzzInstanceID(f *testing.F) {
	for _, s := range []string{"aws:///us-east-1a/i-0abc", "gce://p/z/n", "azure:///a/virtualMachineScaleSets/s/virtualMachines/1",
		"://", "a://virtualMachineScaleSets/virtualMachines", "x://////"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, providerID string) {
		id := kube.InstanceID(providerID)
		if strings.Contains(id, "/") {
			t.Errorf("InstanceID(%q) = %q, a path", providerID, id)
		}
		if id != "" && !strings.Contains(providerID, strings.SplitN(id, "_", 2)[0]) {
			t.Errorf("InstanceID(%q) = %q, not from the input", providerID, id)
		}
	})
}

// A location's node_wait in bursar.yaml overrides the actuator's default: with node_wait 1m, a pod
// Unschedulable for 2 minutes is pending for capacity where the default wait (4m here) would
// still give it a chance.
func TestLocationNodeWaitOverridesTheDefault(t *testing.T) {
	for _, tt := range []struct {
		name        string
		nodeWait    string
		wantPending int
	}{
		{"the default wait", "", 0},
		{"the location's wait", ", node_wait: 1m", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			yaml := strings.Replace(fleetYAML, "namespace: inference}", "namespace: inference"+tt.nodeWait+"}", 1)
			cfg, err := fleet.Parse([]byte(yaml), "test.yaml")
			if err != nil {
				t.Fatal(err)
			}
			c := kubetest.New(deployment("chat-spot", 1, 0), pod("s1", "chat-spot", podState{unschedulable: 2 * time.Minute}))
			a := kube.New(cfg, map[string]kubernetes.Interface{"use1": c}, kube.Options{NodeWait: nodeWait, Now: func() time.Time { return now }})
			obs, err := a.Observe(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(obs) != 1 || obs[0].Pending != tt.wantPending {
				t.Fatalf("observed %+v, want %d pending", obs, tt.wantPending)
			}
		})
	}
}
