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

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apitypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/kube"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/kubeenv"
)

// e2eFleet is the chart's fleet in these tests: one location that is the arbiter's own cluster
// (namespace inference) with a Deployment per market, a StatefulSet and a Job; llm-rsv and tune-od
// are never created (not deployed there). Its node_wait is short so that an Unschedulable pod counts as wanting capacity while the test waits.
const e2eFleet = `
arbiter:
  fleet:
    locations:
      - {name: home, provider: aws, region: us-east-1, actuator: {kind: kubernetes, namespace: inference, node_wait: 1s}}
    workloads:
      - {name: llm, gpu: {models: [H100-80GB], count: 1}, replicas: {min: 0, max: 4}, markets: [spot, on_demand, reserved],
         kubernetes: {spot: llm-spot, on_demand: llm-od, reserved: llm-rsv}}
      - {name: batch, gpu: {models: [A100-80GB], count: 1}, replicas: {min: 0, max: 2}, markets: [reserved],
         kubernetes: {kind: StatefulSet, reserved: batch-rsv}}
      - {name: tune, kind: job, gpu: {models: [H100-80GB], count: 1}, markets: [spot, on_demand],
         job: {work: 48h, deadline_in: 52h, overhead: 3m}, kubernetes: {kind: Job, spot: tune-spot, on_demand: tune-od}}
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

// TestE2EActuatorScalesAsTheChartsServiceAccount: under the Role the chart derives from the
// fleet, the actuator sets a Deployment's and a StatefulSet's replicas through their scale
// subresource, starts, suspends and marks a Job, records an Event on each object it changed,
// reports pods the scheduler found no node for as wanting capacity, and names the instance each
// pod runs on, so a reclaim notice reaches the workload on that node.
func TestE2EActuatorScalesAsTheChartsServiceAccount(t *testing.T) {
	e := installed(t)
	ctx := t.Context()
	act := e.actuator(t, e.fleet)
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
	j, err := e.admin.BatchV1().Jobs(workNS).Get(ctx, "tune-spot", metav1.GetOptions{})
	must(t, err)
	if j.Annotations[kube.AnnotationCheckpoint] == "" || *j.Spec.Suspend {
		t.Errorf("after a checkpoint request the Job has annotations %v, suspend %v; want %s set, running", j.Annotations, *j.Spec.Suspend, kube.AnnotationCheckpoint)
	}

	t.Run("an object not created is not found, not refused", func(t *testing.T) {
		for _, g := range []actuate.Group{home("llm", events.Reserved), home("tune", events.OnDemand)} {
			if err := act.Scale(ctx, actuate.Target{ActionID: "e2e-absent", Group: g, Replicas: 1, Kind: "scale"}); !errors.Is(err, actuate.ErrNotFound) {
				t.Errorf("scaling %s, whose object does not exist: %v, want actuate.ErrNotFound", g, err)
			}
		}
	})
	t.Run("its Events are on the objects it changed", func(t *testing.T) {
		want := map[string][]string{
			"Deployment/llm-spot": {kube.ReasonScaledUp}, "Deployment/llm-od": {kube.ReasonScaledUp},
			"StatefulSet/batch-rsv": {kube.ReasonScaledUp},
			"Job/tune-spot":         {kube.ReasonCheckpoint, kube.ReasonJobStarted, kube.ReasonJobStarted, kube.ReasonJobSuspended},
		}
		if got := e.eventReasons(t, j.UID); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("Events by object = %v, want %v", got, want)
		}
	})

	e.placePods(t, j.Spec.Selector.MatchLabels)
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

// TestE2EActuatorIsRefusedWhatTheRoleDoesNotGrant: the API server refuses the arbiter's
// ServiceAccount (403) what the chart's Role does not grant, called directly or by the actuator
// with a fleet file the Role was not derived from, and the objects stay as they were.
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

// eventReasons are the reasons of the Events the actuator recorded, by the object they are on,
// sorted; an Event whose object's uid is not that object's fails the test.
func (e *e2eEnv) eventReasons(t *testing.T, jobUID apitypes.UID) map[string][]string {
	t.Helper()
	ctx := t.Context()
	uids := map[string]apitypes.UID{"Job/tune-spot": jobUID}
	for _, name := range []string{"llm-spot", "llm-od"} {
		d, err := e.admin.AppsV1().Deployments(workNS).Get(ctx, name, metav1.GetOptions{})
		must(t, err)
		uids["Deployment/"+name] = d.UID
	}
	s, err := e.admin.AppsV1().StatefulSets(workNS).Get(ctx, "batch-rsv", metav1.GetOptions{})
	must(t, err)
	uids["StatefulSet/batch-rsv"] = s.UID
	list, err := e.admin.CoreV1().Events(workNS).List(ctx, metav1.ListOptions{})
	must(t, err)
	got := map[string][]string{}
	for _, ev := range list.Items {
		o := ev.InvolvedObject
		if ev.Source.Component != "bursar" {
			continue
		}
		if key := o.Kind + "/" + o.Name; uids[key] != o.UID {
			t.Errorf("Event %s is on %s uid %q, want uid %q", ev.Name, key, o.UID, uids[key])
		}
		got[o.Kind+"/"+o.Name] = append(got[o.Kind+"/"+o.Name], ev.Reason)
	}
	for k := range got {
		slices.Sort(got[k])
	}
	return got
}
