//go:build e2e

package helm_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/kube"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/kubeenv"
)

// e2eFleet is the chart's fleet in these tests: one location that is the arbiter's own cluster
// (namespace inference) with a Deployment per market, a StatefulSet and a Job. Its node_wait is
// short so that an Unschedulable pod counts as wanting capacity while the test waits.
const e2eFleet = `
arbiter:
  fleet:
    locations:
      - {name: home, provider: aws, region: us-east-1, actuator: {kind: kubernetes, namespace: inference, node_wait: 1s}}
    workloads:
      - {name: llm, gpu: {models: [H100-80GB], count: 1}, replicas: {min: 0, max: 4}, markets: [spot, on_demand],
         kubernetes: {spot: llm-spot, on_demand: llm-od}}
      - {name: batch, gpu: {models: [A100-80GB], count: 1}, replicas: {min: 0, max: 2}, markets: [reserved],
         kubernetes: {kind: StatefulSet, reserved: batch-rsv}}
      - {name: tune, kind: job, gpu: {models: [H100-80GB], count: 1}, markets: [spot],
         job: {work: 48h, deadline_in: 52h, overhead: 3m}, kubernetes: {kind: Job, spot: tune-spot}}
`

const (
	releaseNS = "bursar"         // the namespace render installs the release in
	arbiterSA = "bursar-arbiter" // the arbiter's ServiceAccount there
	workNS    = "inference"      // the fleet's location
	otherNS   = "elsewhere"      // a namespace the fleet has no location in
	nodeLabel = "e2e.bursar.dev/node"
	gpu       = corev1.ResourceName("nvidia.com/gpu")
)

// kubeObject is an API object with metadata: what the chart renders.
type kubeObject interface {
	runtime.Object
	metav1.Object
}

// e2eEnv is a control plane holding the chart's identity for the arbiter and the fleet's objects.
type e2eEnv struct {
	cluster *kubeenv.Cluster
	admin   kubernetes.Interface
	arbiter *rest.Config // the arbiter's ServiceAccount
	fleet   *fleet.Config
}

// installed starts the control plane and installs what the chart renders for the arbiter's
// identity (its ServiceAccount, the Roles and bindings derived from e2eFleet), the fleet's
// workloads, a Deployment the fleet does not name and one in a namespace it has no location in.
func installed(t *testing.T) *e2eEnv {
	t.Helper()
	c := kubeenv.Start(t)
	objs := render(t, e2eFleet)
	for _, ns := range []string{releaseNS, workNS, otherNS} {
		c.Namespace(t, ns)
	}
	var rbac []runtime.Object
	for _, key := range slices.Sorted(maps.Keys(objs)) {
		kind, _, _ := strings.Cut(key, "/")
		o, ok := objs[key].(kubeObject)
		switch {
		case !ok || !slices.Contains([]string{"ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"}, kind):
			continue
		case kind == "ServiceAccount" && o.GetName() != arbiterSA:
			continue
		case kind == "ServiceAccount" && o.GetNamespace() == "":
			o.SetNamespace(releaseNS) // as helm install --namespace does
		}
		rbac = append(rbac, o)
	}
	c.Apply(t, rbac...)
	c.Apply(t, deployment(workNS, "llm-spot"), deployment(workNS, "llm-od"), deployment(workNS, "stray"),
		deployment(otherNS, "llm-spot"), statefulSet(workNS, "batch-rsv"), job(workNS, "tune-spot"))
	cm := objs["ConfigMap/bursar-arbiter"].(*corev1.ConfigMap)
	cfg, err := fleet.Parse([]byte(cm.Data["bursar.yaml"]), "bursar.yaml")
	if err != nil {
		t.Fatalf("the chart's fleet file: %v", err)
	}
	return &e2eEnv{cluster: c, admin: c.Client(t), arbiter: c.ConfigAs(t, releaseNS, arbiterSA), fleet: cfg}
}

// actuator builds the kube actuator as `arbiter run` does, with kube.Connect over the fleet file.
// Outside a pod there is no in-cluster config, so each location that is the arbiter's own cluster
// is pointed at a kubeconfig holding the ServiceAccount's token: the one thing changed.
func (e *e2eEnv) actuator(t *testing.T, cfg *fleet.Config) *kube.Actuator {
	t.Helper()
	path := e.cluster.Kubeconfig(t, e.arbiter)
	for i := range cfg.Locations {
		if a := &cfg.Locations[i].Actuator; a.Kind == fleet.KindKubernetes && a.Kubeconfig == "" && a.Context == "" {
			a.Kubeconfig = path
		}
	}
	act, err := kube.Connect(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return act
}

func TestE2EActuatorScalesAsTheChartsServiceAccount(t *testing.T) {
	e := installed(t)
	ctx := t.Context()
	act := e.actuator(t, e.fleet)
	apps, batch := e.admin.AppsV1(), e.admin.BatchV1()
	steps := []struct {
		group  actuate.Group
		object string
		n      int
	}{
		{home("llm", events.Spot), "llm-spot", 2},
		{home("llm", events.OnDemand), "llm-od", 1},
		{home("batch", events.Reserved), "batch-rsv", 1},
		{home("tune", events.Spot), "tune-spot", 1},
		{home("tune", events.Spot), "tune-spot", 0},
		{home("tune", events.Spot), "tune-spot", 1},
	}
	for i, s := range steps {
		if err := act.Scale(ctx, actuate.Target{ActionID: fmt.Sprintf("e2e-%d", i), Group: s.group, Replicas: s.n, Kind: "scale"}); err != nil {
			t.Fatalf("step %d: scaling %s to %d: %v", i, s.group, s.n, err)
		}
		got, err := replicas(ctx, e.admin, s.object)
		must(t, err)
		desired, err := act.Desired(ctx, s.group)
		if err != nil || got != int32(s.n) || desired != s.n {
			t.Fatalf("step %d: scaled %s to %d; %s reads back %d, Desired %d (%v)", i, s.group, s.n, s.object, got, desired, err)
		}
	}
	must(t, act.Scale(ctx, actuate.Target{ActionID: "e2e-ckpt", Group: home("tune", events.Spot), Replicas: 1, Kind: actuate.KindCheckpoint}))
	j, err := batch.Jobs(workNS).Get(ctx, "tune-spot", metav1.GetOptions{})
	must(t, err)
	if j.Annotations[kube.AnnotationCheckpoint] == "" || *j.Spec.Suspend {
		t.Errorf("after a checkpoint request the Job has annotations %v, suspend %v; want %s set, running", j.Annotations, *j.Spec.Suspend, kube.AnnotationCheckpoint)
	}

	t.Run("its Events are on the objects it changed", func(t *testing.T) {
		uids := map[string]string{"Job/tune-spot": string(j.UID)}
		for _, name := range []string{"llm-spot", "llm-od"} {
			d, err := apps.Deployments(workNS).Get(ctx, name, metav1.GetOptions{})
			must(t, err)
			uids["Deployment/"+name] = string(d.UID)
		}
		s, err := apps.StatefulSets(workNS).Get(ctx, "batch-rsv", metav1.GetOptions{})
		must(t, err)
		uids["StatefulSet/batch-rsv"] = string(s.UID)
		list, err := e.admin.CoreV1().Events(workNS).List(ctx, metav1.ListOptions{})
		must(t, err)
		got := map[string][]string{}
		for _, ev := range list.Items {
			o := ev.InvolvedObject
			if ev.Source.Component != "bursar" {
				continue
			}
			if uids[o.Kind+"/"+o.Name] != string(o.UID) {
				t.Errorf("Event %s is on %s/%s uid %q, want uid %q", ev.Name, o.Kind, o.Name, o.UID, uids[o.Kind+"/"+o.Name])
			}
			got[o.Kind+"/"+o.Name] = append(got[o.Kind+"/"+o.Name], ev.Reason)
		}
		want := map[string][]string{
			"Deployment/llm-spot": {kube.ReasonScaledUp}, "Deployment/llm-od": {kube.ReasonScaledUp},
			"StatefulSet/batch-rsv": {kube.ReasonScaledUp},
			"Job/tune-spot":         {kube.ReasonCheckpoint, kube.ReasonJobStarted, kube.ReasonJobStarted, kube.ReasonJobSuspended},
		}
		for k := range got {
			slices.Sort(got[k])
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("Events by object = %v, want %v", got, want)
		}
	})

	// The controllers' part (none runs): a pod for each object, as its controller would make it,
	// two that fit a node and two asking for more GPUs than any node has; the scheduler is real.
	e.cluster.AddNode(t, "gpu-a", "aws:///us-east-1a/i-0aaa", map[string]string{nodeLabel: "gpu-a"}, 1)
	e.cluster.AddNode(t, "gpu-b", "aws:///us-east-1b/i-0bbb", map[string]string{nodeLabel: "gpu-b"}, 1)
	pods := e.admin.CoreV1().Pods(workNS)
	for _, p := range []*corev1.Pod{
		pod("llm-spot-1", podLabels("llm-spot"), 1, "gpu-a"),
		pod("batch-rsv-0", podLabels("batch-rsv"), 1, "gpu-b"),
		pod("llm-od-1", podLabels("llm-od"), 8, ""),
		pod("tune-spot-1", j.Spec.Selector.MatchLabels, 8, ""),
	} {
		_, err := pods.Create(ctx, p, metav1.CreateOptions{})
		must(t, err)
	}
	eventually(t, "the scheduler binds two pods and finds no node for two", func(ctx context.Context) (bool, error) {
		list, err := pods.List(ctx, metav1.ListOptions{})
		done := 0
		for _, p := range list.Items {
			if p.Spec.NodeName != "" || slices.ContainsFunc(p.Status.Conditions, unschedulable) {
				done++
			}
		}
		return done == 4, err
	})
	ready(ctx, t, pods, "llm-spot-1") // the kubelet's part

	var obs []actuate.Observed
	eventually(t, "the Unschedulable pods outwait node_wait", func(ctx context.Context) (bool, error) {
		var err error
		obs, err = act.Observe(ctx)
		return err == nil && count(obs, func(o actuate.Observed) bool { return o.Pending > 0 }) == 2, err
	})
	t.Run("pods with no node are unable to get capacity", func(t *testing.T) {
		want := map[actuate.Group]string{
			home("llm", events.Spot):       "desired 2, instances [i-0aaa], starting [], pending 0 ",
			home("llm", events.OnDemand):   "desired 1, instances [], starting [], pending 1 " + actuate.ReasonNoCapacity,
			home("batch", events.Reserved): "desired 1, instances [], starting [i-0bbb], pending 0 ",
			home("tune", events.Spot):      "desired 1, instances [], starting [], pending 1 " + actuate.ReasonNoCapacity,
		}
		got := map[actuate.Group]string{}
		for _, o := range obs {
			got[o.Group] = fmt.Sprintf("desired %d, instances %v, starting %v, pending %d %s", o.Desired, o.Instances, o.Starting, o.Pending, o.Reason)
		}
		if !maps.Equal(got, want) {
			t.Errorf("Observe =\n%v\nwant\n%v", got, want)
		}
	})
	t.Run("a notice reaches the workload on its node", func(t *testing.T) {
		for _, tt := range []struct {
			notice events.CapacityReclaimed
			want   []actuate.Group
		}{
			{events.CapacityReclaimed{Provider: "aws", Zone: "us-east-1a", Instance: "i-0aaa", Kind: events.ReclaimInterruption}, []actuate.Group{home("llm", events.Spot)}},
			{events.CapacityReclaimed{Provider: "aws", Zone: "us-east-1b", Instance: "i-0bbb", Kind: events.ReclaimInterruption}, []actuate.Group{home("batch", events.Reserved)}},
			{events.CapacityReclaimed{Provider: "aws", Zone: "us-east-1a", Instance: "i-0ccc", Kind: events.ReclaimInterruption}, nil},
		} {
			if got := occupants(obs, tt.notice.Instance); !slices.Equal(got, tt.want) {
				t.Errorf("a notice for %s reaches %v, want %v", tt.notice.Instance, got, tt.want)
			}
		}
	})
}

func TestE2EActuatorIsRefusedWhatTheRoleDoesNotGrant(t *testing.T) {
	e := installed(t)
	ctx := t.Context()
	sa, err := kubernetes.NewForConfig(e.arbiter)
	must(t, err)
	if _, err := sa.AppsV1().Deployments(workNS).GetScale(ctx, "llm-spot", metav1.GetOptions{}); err != nil {
		t.Fatalf("the ServiceAccount cannot read what its Role grants: %v", err)
	}
	scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "stray", Namespace: workNS}, Spec: autoscalingv1.ScaleSpec{Replicas: 1}}
	for _, tt := range []struct {
		name string
		call func() error
	}{
		{"reading the scale of a Deployment the fleet does not name", func() error {
			_, err := sa.AppsV1().Deployments(workNS).GetScale(ctx, "stray", metav1.GetOptions{})
			return err
		}},
		{"setting it", func() error {
			_, err := sa.AppsV1().Deployments(workNS).UpdateScale(ctx, "stray", scale, metav1.UpdateOptions{})
			return err
		}},
		{"a named Deployment in a namespace with no location", func() error {
			_, err := sa.AppsV1().Deployments(otherNS).GetScale(ctx, "llm-spot", metav1.GetOptions{})
			return err
		}},
		{"editing a named Deployment other than its scale", func() error {
			d, err := e.admin.AppsV1().Deployments(workNS).Get(ctx, "llm-spot", metav1.GetOptions{})
			if err != nil {
				return err
			}
			_, err = sa.AppsV1().Deployments(workNS).Update(ctx, d, metav1.UpdateOptions{})
			return err
		}},
		{"deleting a Deployment it scales", func() error {
			return sa.AppsV1().Deployments(workNS).Delete(ctx, "llm-spot", metav1.DeleteOptions{})
		}},
		{"deleting a Job it suspends", func() error { return sa.BatchV1().Jobs(workNS).Delete(ctx, "tune-spot", metav1.DeleteOptions{}) }},
		{"deleting a pod", func() error { return sa.CoreV1().Pods(workNS).Delete(ctx, "llm-spot-1", metav1.DeleteOptions{}) }},
		{"reading Secrets", func() error { _, err := sa.CoreV1().Secrets(workNS).List(ctx, metav1.ListOptions{}); return err }},
		{"listing nodes", func() error { _, err := sa.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); return err }},
	} {
		t.Run(tt.name, func(t *testing.T) { forbidden(t, tt.call()) })
	}

	t.Run("through the actuator, with a fleet file the Role was not derived from", func(t *testing.T) {
		cfg, err := fleet.Parse([]byte(`locations:
  - {name: home, provider: aws, region: us-east-1, actuator: {kind: kubernetes, namespace: inference}}
  - {name: away, provider: aws, region: us-east-1, actuator: {kind: kubernetes, namespace: elsewhere}}
workloads:
  - {name: stray, gpu: {models: [H100-80GB], count: 1}, replicas: {min: 0, max: 1}, markets: [spot], kubernetes: {spot: stray}}
  - {name: llm, gpu: {models: [H100-80GB], count: 1}, replicas: {min: 0, max: 1}, markets: [spot], kubernetes: {spot: llm-spot}}
`), "stray.yaml")
		must(t, err)
		act := e.actuator(t, cfg)
		for _, g := range []actuate.Group{home("stray", events.Spot), {Workload: "llm", Location: "away", Market: events.Spot}} {
			forbidden(t, act.Scale(ctx, actuate.Target{ActionID: "e2e-stray", Group: g, Replicas: 1, Kind: "scale"}))
		}
		_, err = act.Observe(ctx)
		forbidden(t, err)
		for _, ns := range []string{workNS, otherNS} {
			list, err := e.admin.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
			must(t, err)
			for _, d := range list.Items {
				if *d.Spec.Replicas != 0 {
					t.Errorf("Deployment %s/%s has %d replicas after refused calls, want 0", ns, d.Name, *d.Spec.Replicas)
				}
			}
		}
	})
}

// forbidden fails unless err is the API server's 403 to the arbiter's ServiceAccount.
func forbidden(t *testing.T, err error) {
	t.Helper()
	var status apierrors.APIStatus
	if !apierrors.IsForbidden(err) || !errors.As(err, &status) || status.Status().Code != http.StatusForbidden ||
		!strings.Contains(err.Error(), "system:serviceaccount:"+releaseNS+":"+arbiterSA) {
		t.Errorf("err = %v, want the server's 403 to the arbiter's ServiceAccount", err)
	}
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
func ready(ctx context.Context, t *testing.T, pods interface {
	Get(context.Context, string, metav1.GetOptions) (*corev1.Pod, error)
	UpdateStatus(context.Context, *corev1.Pod, metav1.UpdateOptions) (*corev1.Pod, error)
}, name string) {
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
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
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
