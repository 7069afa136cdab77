//go:build e2e

package kubeenv_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/kubeenv"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// scheduleWithin bounds the wait for the scheduler to decide about a pod (it starts with the
// cluster and must first list what it watches); it is a deadline, not a measurement.
const scheduleWithin = 2 * time.Minute

// TestE2EControlPlane checks what the other e2e tests rely on: RBAC is enforced for a
// service account, apply validates strictly, and the real scheduler binds GPU pods to API-only
// nodes and leaves the ones no node fits Pending as Unschedulable.
func TestE2EControlPlane(t *testing.T) {
	c := kubeenv.Start(t)
	admin := c.Client(t)
	ctx := context.Background()
	const ns = "e2e"
	c.Namespace(t, ns)

	t.Run("rbac", func(t *testing.T) {
		c.Namespace(t, ns) // a second call finds both and is fine
		sa, err := kubernetes.NewForConfig(c.ConfigAs(t, ns, "default"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = sa.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if !apierrors.IsForbidden(err) {
			t.Fatalf("listing pods with no Role: got %v, want 403 Forbidden", err)
		}
		c.Apply(t,
			&rbacv1.Role{
				ObjectMeta: metav1.ObjectMeta{Name: "pod-reader", Namespace: ns},
				Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}}},
			},
			&rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "pod-reader", Namespace: ns},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pod-reader"},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: ns}},
			},
		)
		if _, err := sa.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err != nil {
			t.Fatalf("listing pods with the Role bound: %v", err)
		}
		// Listing is all the Role grants.
		_, err = sa.CoreV1().Pods(ns).Create(ctx, gpuPod(ns, "denied", 0), metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) {
			t.Fatalf("creating a pod with a list-only Role: got %v, want 403 Forbidden", err)
		}
	})

	t.Run("kubeconfig", func(t *testing.T) {
		cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig(t, c.ConfigAs(t, ns, "default")))
		if err != nil {
			t.Fatal(err)
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
		if !apierrors.IsForbidden(err) {
			t.Fatalf("listing secrets through the kubeconfig: got %v, want 403 Forbidden", err)
		}
	})

	t.Run("strict apply", func(t *testing.T) {
		cm := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "typo", "namespace": ns},
			"data":     map[string]any{"k": "v"},
			"dataa":    map[string]any{"k": "v"},
		}}
		err := c.TryApply(ctx, cm)
		if err == nil || !strings.Contains(err.Error(), "dataa") || !strings.Contains(err.Error(), "ConfigMap e2e/typo") {
			t.Fatalf("applying a ConfigMap with an unknown field: got %v, want a refusal naming the field and the object", err)
		}
		if _, err := admin.CoreV1().ConfigMaps(ns).Get(ctx, "typo", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("after a refused apply: got %v, want the ConfigMap not found", err)
		}
		delete(cm.Object, "dataa")
		c.Apply(t, cm)
		got, err := admin.CoreV1().ConfigMaps(ns).Get(ctx, "typo", metav1.GetOptions{})
		if err != nil || got.Data["k"] != "v" {
			t.Fatalf("the applied ConfigMap: %v, %v", got, err)
		}
	})

	t.Run("scheduling", func(t *testing.T) {
		c.AddNode(t, "gpu-node", "aws:///us-east-1a/i-0123456789abcdef0",
			map[string]string{"node.kubernetes.io/instance-type": "p4d.24xlarge"}, 8)
		c.AddNode(t, "cpu-node", "aws:///us-east-1a/i-0fedcba9876543210", nil, 0)
		if _, err := admin.CoreV1().Pods(ns).Create(ctx, gpuPod(ns, "fits", 1), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.CoreV1().Pods(ns).Create(ctx, gpuPod(ns, "too-big", 9), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		fits := waitPod(t, admin, ns, "fits", func(p *corev1.Pod) bool { return p.Spec.NodeName != "" })
		if fits.Spec.NodeName != "gpu-node" {
			t.Errorf("a 1-GPU pod was bound to %q, want gpu-node", fits.Spec.NodeName)
		}
		big := waitPod(t, admin, ns, "too-big", func(p *corev1.Pod) bool { return scheduled(p) != nil })
		cond := scheduled(big)
		if cond.Status != corev1.ConditionFalse || cond.Reason != corev1.PodReasonUnschedulable || big.Spec.NodeName != "" {
			t.Errorf("a 9-GPU pod: PodScheduled=%s (%s: %s) on %q, want False/Unschedulable on no node",
				cond.Status, cond.Reason, cond.Message, big.Spec.NodeName)
		}
		if big.Status.Phase != corev1.PodPending {
			t.Errorf("a 9-GPU pod is %s, want Pending", big.Status.Phase)
		}
	})
}

// gpuPod is a pod asking for gpus NVIDIA GPUs (an extended resource: its request is its limit).
func gpuPod(ns, name string, gpus int64) *corev1.Pod {
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	if gpus > 0 {
		res[kubeenv.GPUResource] = *resource.NewQuantity(gpus, resource.DecimalSI)
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "train", Image: "example.invalid/train:1",
			Resources: corev1.ResourceRequirements{Requests: res, Limits: res},
		}}},
	}
}

// scheduled returns the pod's PodScheduled condition, nil while the scheduler has not decided.
func scheduled(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodScheduled {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// waitPod polls the pod until done says so or scheduleWithin passes.
func waitPod(t *testing.T, cs kubernetes.Interface, ns, name string, done func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(scheduleWithin)
	for {
		p, err := cs.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("getting pod %s/%s: %v", ns, name, err)
		}
		if done(p) {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s/%s: the scheduler did not decide within %s; status: %+v", ns, name, scheduleWithin, p.Status)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
