package kubeenv

import (
	"context"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GPUResource is the extended resource NVIDIA's device plugin advertises.
const GPUResource corev1.ResourceName = "nvidia.com/gpu"

// nodeCapacity is what every AddNode node offers besides GPUs: roomy enough that only GPUs
// decide where a test's pod fits.
var nodeCapacity = corev1.ResourceList{
	corev1.ResourceCPU:              resource.MustParse("64"),
	corev1.ResourceMemory:           resource.MustParse("512Gi"),
	corev1.ResourceEphemeralStorage: resource.MustParse("1Ti"),
	corev1.ResourcePods:             resource.MustParse("110"),
}

// AddNode creates a Node as an API object (as kwok does): providerID, labels, allocatable cpu,
// memory and nvidia.com/gpu, Ready; the scheduler can bind pods to it (nothing runs them). The
// node also carries the kubernetes.io/hostname label a kubelet sets, unless labels sets it.
func (c *Cluster) AddNode(t testing.TB, name, providerID string, labels map[string]string, gpus int) {
	t.Helper()
	ctx := context.Background()
	nodes := c.Client(t).CoreV1().Nodes()
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
		Spec:       corev1.NodeSpec{ProviderID: providerID},
	}
	for k, v := range labels {
		node.Labels[k] = v
	}
	created, err := nodes.Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("kubeenv: creating node %s: %v", name, err)
	}
	// A node's status is written through its subresource, as a kubelet (or kwok) reports it.
	created.Status = nodeStatus(gpus)
	ready, err := nodes.UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("kubeenv: reporting node %s ready: %v", name, err)
	}
	// The TaintNodesByCondition admission plugin taints every new node not-ready; the
	// controller-manager's node lifecycle controller lifts the taint once the node reports
	// Ready. None runs here, so do what it would.
	ready.Spec.Taints = untainted(ready.Spec.Taints)
	if _, err := nodes.Update(ctx, ready, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("kubeenv: lifting node %s's not-ready taint: %v", name, err)
	}
}

// untainted drops the taints the node lifecycle controller manages from a Ready node.
func untainted(taints []corev1.Taint) []corev1.Taint {
	var kept []corev1.Taint
	for _, tt := range taints {
		if tt.Key != corev1.TaintNodeNotReady && tt.Key != corev1.TaintNodeUnreachable {
			kept = append(kept, tt)
		}
	}
	return kept
}

func nodeStatus(gpus int) corev1.NodeStatus {
	capacity := nodeCapacity.DeepCopy()
	if gpus > 0 {
		capacity[GPUResource] = resource.MustParse(strconv.Itoa(gpus))
	}
	now := metav1.Now()
	return corev1.NodeStatus{
		Capacity:    capacity,
		Allocatable: capacity.DeepCopy(),
		Phase:       corev1.NodeRunning,
		Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue,
			Reason: "KubeletReady", Message: "created by kubeenv; nothing runs its pods",
			LastHeartbeatTime: now, LastTransitionTime: now,
		}},
	}
}
