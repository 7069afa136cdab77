//go:build e2e

package helm_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/events"
)

// The parts of the cluster no process plays in kubeenv (there is no controller-manager and no
// kubelet): the fleet's objects as their owner creates them, their pods as their controllers
// would, and a pod's readiness as its kubelet reports it. The scheduler is real.

// placePods adds two one-GPU nodes and a pod for each object of the fleet: llm-spot's and
// batch-rsv's each fit one node, llm-od's and the Job's (whose pods carry jobPods) ask for more
// GPUs than any node has. It returns once the scheduler has bound or refused each, with
// llm-spot's pod ready.
func (e *e2eEnv) placePods(t *testing.T, jobPods map[string]string) {
	t.Helper()
	ctx := t.Context()
	e.cluster.AddNode(t, "gpu-a", "aws:///us-east-1a/i-0aaa", map[string]string{nodeLabel: "gpu-a"}, 1)
	e.cluster.AddNode(t, "gpu-b", "aws:///us-east-1b/i-0bbb", map[string]string{nodeLabel: "gpu-b"}, 1)
	pods := e.admin.CoreV1().Pods(workNS)
	for _, p := range []*corev1.Pod{
		pod("llm-spot-1", podLabels("llm-spot"), 1, "gpu-a"),
		pod("batch-rsv-0", podLabels("batch-rsv"), 1, "gpu-b"),
		pod("llm-od-1", podLabels("llm-od"), 8, ""),
		pod("tune-spot-1", jobPods, 8, ""),
	} {
		_, err := pods.Create(ctx, p, metav1.CreateOptions{})
		must(t, err)
	}
	wantNode := map[string]string{"llm-spot-1": "gpu-a", "batch-rsv-0": "gpu-b", "llm-od-1": "", "tune-spot-1": ""}
	eventually(t, "the scheduler binds two pods and finds no node for two", func(ctx context.Context) (bool, error) {
		list, err := pods.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		var wrong []string
		for _, p := range list.Items {
			if want := wantNode[p.Name]; p.Spec.NodeName != want || want == "" && !slices.ContainsFunc(p.Status.Conditions, unschedulable) {
				wrong = append(wrong, fmt.Sprintf("%s on %q (want %q): %v", p.Name, p.Spec.NodeName, want, p.Status.Conditions))
			}
		}
		if len(wrong) > 0 {
			return false, errors.New(strings.Join(wrong, "; "))
		}
		return true, nil
	})
	ready(ctx, t, pods, "llm-spot-1") // its kubelet's part; batch-rsv-0 stays starting
}

// occupants are the groups whose pods run or start on instance, as the arbiter matches a notice.
func occupants(obs []actuate.Observed, instance string) []actuate.Group {
	var out []actuate.Group
	for _, o := range obs {
		if slices.Contains(o.Instances, instance) || slices.Contains(o.Starting, instance) {
			out = append(out, o.Group)
		}
	}
	slices.SortFunc(out, actuate.CompareGroups)
	return out
}

// replicas reads back what object (in workNS) is set to run: spec.replicas, or for the Job one
// replica unless it is suspended.
func replicas(ctx context.Context, admin kubernetes.Interface, object string) (int32, error) {
	switch object {
	case "batch-rsv":
		s, err := admin.AppsV1().StatefulSets(workNS).Get(ctx, object, metav1.GetOptions{})
		if err != nil {
			return 0, err
		}
		return *s.Spec.Replicas, nil
	case "tune-spot":
		j, err := admin.BatchV1().Jobs(workNS).Get(ctx, object, metav1.GetOptions{})
		if err != nil || *j.Spec.Suspend {
			return 0, err
		}
		return 1, nil
	}
	d, err := admin.AppsV1().Deployments(workNS).Get(ctx, object, metav1.GetOptions{})
	if err != nil {
		return 0, err
	}
	return *d.Spec.Replicas, nil
}

func home(workload string, m events.Market) actuate.Group {
	return actuate.Group{Workload: workload, Location: "home", Market: m}
}

func podLabels(object string) map[string]string { return map[string]string{"app": object} }

func podTemplate(object string, restart corev1.RestartPolicy) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: podLabels(object)},
		Spec: corev1.PodSpec{RestartPolicy: restart, Containers: []corev1.Container{{Name: "server", Image: "registry.k8s.io/pause:3.10"}}}}
}

func deployment(ns, name string) *appsv1.Deployment {
	return &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{Replicas: new(int32), Selector: &metav1.LabelSelector{MatchLabels: podLabels(name)},
			Template: podTemplate(name, corev1.RestartPolicyAlways)}}
}

func statefulSet(ns, name string) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.StatefulSetSpec{Replicas: new(int32), ServiceName: name, Selector: &metav1.LabelSelector{MatchLabels: podLabels(name)},
			Template: podTemplate(name, corev1.RestartPolicyAlways)}}
}

// job is created suspended, as a job's owner creates it; the server makes its pod selector.
func job(ns, name string) *batchv1.Job {
	suspend := true
	return &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       batchv1.JobSpec{Suspend: &suspend, Template: podTemplate(name, corev1.RestartPolicyNever)}}
}

// pod is a replica asking for gpus GPUs, on the node named (by its label) unless node is "".
func pod(name string, labels map[string]string, gpus int64, node string) *corev1.Pod {
	n := *resource.NewQuantity(gpus, resource.DecimalSI)
	no := false
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PodSpec{AutomountServiceAccountToken: &no, Containers: []corev1.Container{{Name: "server", Image: "registry.k8s.io/pause:3.10",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{gpu: n}, Limits: corev1.ResourceList{gpu: n}}}}}}
	if node != "" {
		p.Spec.NodeSelector = map[string]string{nodeLabel: node}
	}
	return p
}

func unschedulable(c corev1.PodCondition) bool {
	return c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable
}

// ready marks a bound pod Running and Ready, as its node's kubelet would.
func ready(ctx context.Context, t *testing.T, pods typedcorev1.PodInterface, name string) {
	t.Helper()
	p, err := pods.Get(ctx, name, metav1.GetOptions{})
	must(t, err)
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue,
		LastTransitionTime: metav1.Now()})
	_, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
	must(t, err)
}

func count[T any](s []T, f func(T) bool) int {
	n := 0
	for _, x := range s {
		if f(x) {
			n++
		}
	}
	return n
}

// eventually polls cond until it holds, failing the test after a generous bound.
func eventually(t *testing.T, what string, cond func(context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		ok, err := cond(t.Context()) // not the poll's: its deadline would hide cond's last error
		last = err
		return ok, nil
	})
	if err != nil {
		t.Fatalf("waiting until %s: %v (last error: %v)", what, err, last)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
