//go:build e2e

package helm_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/bursar-dev/bursar/internal/kubeenv"
)

// TestE2EDocsFromZero applies docs/deploy.md's steps to a real API server as written, and with
// the choices the page offers: every object is accepted under strict validation, and every pod
// the release makes finds what it mounts, reads and runs as. Each variant is a release in a
// namespace of its own.
func TestE2EDocsFromZero(t *testing.T) {
	c := kubeenv.Start(t)
	in := readDocs(t)
	for _, tc := range []struct {
		name   string
		in     docsInstall
		values []string
	}{
		{"as written", in, nil},
		{"slack left out", withoutSlack(in), nil},
		{"report as a cronjob", in, []string{"report-cronjob.yaml"}},
		{"report as a cronjob, slack left out", withoutSlack(in), []string{"report-cronjob.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.namespace = in.namespace + "-" + strings.NewReplacer(" ", "-", ",", "").Replace(tc.name)
			objs := renderDocs(t, tc.in, tc.values...)
			applyDocs(t, c, tc.in, objs, dummyData)
			checkPodsCanStart(t, c.Client(t), objs)
		})
	}
	t.Run("slack over HTTP", func(t *testing.T) {
		hin, file := slackHTTP(t, in)
		hin.namespace = in.namespace + "-slack-http"
		objs := renderDocs(t, hin, file)
		applyDocs(t, c, hin, objs, dummyData)
		checkPodsCanStart(t, c.Client(t), objs)
		checkSlackIngress(t, c.Client(t), hin.namespace)
	})
}

// checkSlackIngress: the release's Ingress sends POST /slack/interactions to a Service port
// that exists, as read back from the API server.
func checkSlackIngress(t *testing.T, cs kubernetes.Interface, ns string) {
	t.Helper()
	ctx := context.Background()
	ings, err := cs.NetworkingV1().Ingresses(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(ings.Items) == 0 {
		t.Fatalf("no Ingress for Slack's HTTP mode in %s (%v)", ns, err)
	}
	for _, ing := range ings.Items {
		for _, r := range ing.Spec.Rules {
			for _, p := range r.HTTP.Paths {
				if p.Path != "/slack/interactions" || p.Backend.Service == nil {
					continue
				}
				svc, err := cs.CoreV1().Services(ns).Get(ctx, p.Backend.Service.Name, metav1.GetOptions{})
				if err != nil {
					t.Fatalf("Ingress %s sends Slack to Service %s: %v", ing.Name, p.Backend.Service.Name, err)
				}
				want := p.Backend.Service.Port
				if !slices.ContainsFunc(svc.Spec.Ports, func(sp corev1.ServicePort) bool {
					return sp.Name == want.Name && want.Name != "" || sp.Port == want.Number && want.Number != 0
				}) {
					t.Errorf("Ingress %s sends Slack to Service %s port %v, which it does not have", ing.Name, svc.Name, want)
				}
				return
			}
		}
	}
	t.Errorf("no Ingress in %s routes /slack/interactions", ns)
}

// TestE2EArbiterOffReportCanStart (issue 31 item 5): with arbiter.enabled false, the report's
// pods still find everything they mount (the arbiter's ConfigMap is not made then).
func TestE2EArbiterOffReportCanStart(t *testing.T) {
	c := kubeenv.Start(t)
	in := readDocs(t)
	objs := renderDocs(t, in, "arbiter-off.yaml")
	applyDocs(t, c, in, objs, dummyData)
	checkPodsCanStart(t, c.Client(t), objs)
}

// TestE2ESingleArbiterDrains (issue 31 item 5): a release with one arbiter does not block a node
// drain. kubectl drain evicts through the API server's eviction subresource, which refuses (429)
// while a PodDisruptionBudget allows no disruption; so either no PDB is made, or evicting the
// one arbiter succeeds.
func TestE2ESingleArbiterDrains(t *testing.T) {
	c := kubeenv.Start(t)
	in := readDocs(t)
	objs := renderDocs(t, in, "single-arbiter.yaml")
	applyDocs(t, c, in, objs, dummyData)
	cs, ctx := c.Client(t), context.Background()
	pdbs, err := cs.PolicyV1().PodDisruptionBudgets(in.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pdbs.Items) == 0 {
		t.Log("no PodDisruptionBudget for one arbiter: nothing blocks a drain")
		return
	}
	c.AddNode(t, "gpu-node-1", "aws:///us-east-1a/i-0e2e0000000000001", nil, 0)
	for _, pdb := range pdbs.Items {
		pod := runningPod(t, cs, in.namespace, pdb.Name+"-pod", pdb.Spec.Selector.MatchLabels, "gpu-node-1")
		settlePDB(t, cs, &pdb, expectedPods(t, cs, in.namespace, pdb.Spec.Selector.MatchLabels))
		ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: in.namespace}}
		if err := cs.PolicyV1().Evictions(in.namespace).Evict(ctx, ev); err != nil {
			t.Errorf("evicting the only pod of PodDisruptionBudget %s (%s) as kubectl drain does: %v", pdb.Name, pdbBudget(pdb.Spec), err)
		}
	}
}

func pdbBudget(s policyv1.PodDisruptionBudgetSpec) string {
	if s.MinAvailable != nil {
		return "minAvailable " + s.MinAvailable.String()
	}
	if s.MaxUnavailable != nil {
		return "maxUnavailable " + s.MaxUnavailable.String()
	}
	return "no budget"
}

// runningPod creates a pod with labels bound to node and marks it Running and Ready, as a
// kubelet would report it (none runs here).
func runningPod(t *testing.T, cs kubernetes.Interface, ns, name string, lbls map[string]string, node string) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: lbls},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/pause"}}}}
	pod, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	pod.Status.Phase = corev1.PodRunning
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}}
	pod, err = cs.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

// expectedPods is the replica count of the workload whose pods the selector picks: what the
// disruption controller takes as the expected count, through the pods' owner's scale.
func expectedPods(t *testing.T, cs kubernetes.Interface, ns string, sel map[string]string) int32 {
	t.Helper()
	ds, err := cs.AppsV1().Deployments(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds.Items {
		if labels.SelectorFromSet(sel).Matches(labels.Set(d.Spec.Template.Labels)) && d.Spec.Replicas != nil {
			return *d.Spec.Replicas
		}
	}
	t.Fatalf("no Deployment in %s has pods matching %v", ns, sel)
	return 0
}

// settlePDB writes the status the disruption controller would (no controller-manager runs
// here): one healthy pod of expected, the healthy pods the budget wants, and so how many may be
// disrupted. The API server's eviction refuses anything while the status is not current.
// The arithmetic is the controller's (pkg/controller/disruption: getExpectedPodCount, with
// percentages rounded up).
func settlePDB(t *testing.T, cs kubernetes.Interface, pdb *policyv1.PodDisruptionBudget, expected int32) {
	t.Helper()
	desired := expected
	switch {
	case pdb.Spec.MinAvailable != nil:
		v, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, int(expected), true)
		if err != nil {
			t.Fatal(err)
		}
		desired = int32(v)
	case pdb.Spec.MaxUnavailable != nil:
		v, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, int(expected), true)
		if err != nil {
			t.Fatal(err)
		}
		desired = max(0, expected-int32(v))
	}
	healthy := int32(1)
	pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, CurrentHealthy: healthy,
		DesiredHealthy: desired, ExpectedPods: expected, DisruptionsAllowed: max(0, healthy-desired)}
	if _, err := cs.PolicyV1().PodDisruptionBudgets(pdb.Namespace).UpdateStatus(context.Background(), pdb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// extension is what testdata/extensions.yaml gives every workload (issue 31 item 4): an extra
// variable, variables from a Secret the user made, a volume from another, its mount, and a pod
// annotation; and the collector's ServiceAccount an IRSA role.
const (
	extraEnv       = "BURSAR_E2E_EXTRA"
	extraEnvSecret = "bursar-e2e-env"
	extraVolume    = "bursar-e2e-files"
	extraMount     = "/etc/bursar-extra"
	extraAnno      = "e2e.bursar.dev/extra"
	irsaAnno       = "eks.amazonaws.com/role-arn"
)

// TestE2EExtensionPoints (issue 31 item 4): values that carry what the configs reference
// (webhook secrets, price-API keys, contract files, a cloud role) reach every pod, as read back
// from the API server.
func TestE2EExtensionPoints(t *testing.T) {
	c := kubeenv.Start(t)
	in := readDocs(t)
	objs, err := tryRenderDocs(in, "extensions.yaml")
	if err != nil {
		t.Fatalf("rendering with testdata/extensions.yaml: %v", err)
	}
	c.Namespace(t, in.namespace)
	cs := c.Client(t)
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: extraEnvSecret}, StringData: map[string]string{"BURSAR_E2E_FROM_SECRET": "x"}},
		{ObjectMeta: metav1.ObjectMeta{Name: extraVolume}, StringData: map[string]string{"contracts.csv": "provider,sku\n"}},
	} {
		if _, err := cs.CoreV1().Secrets(in.namespace).Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	applyDocs(t, c, in, objs, dummyData)
	checkPodsCanStart(t, cs, objs)
	for _, w := range workloads(objs) {
		tmpl := appliedTemplate(t, cs, w)
		for _, miss := range lacksExtensions(tmpl) {
			t.Errorf("%s: %s", w, miss)
		}
		if strings.Contains(w.name, "collector") {
			checkRole(t, cs, w, tmpl.Spec.ServiceAccountName)
		}
	}
}

// lacksExtensions says which of testdata/extensions.yaml's additions tmpl does not carry.
func lacksExtensions(tmpl corev1.PodTemplateSpec) []string {
	var out []string
	if tmpl.Annotations[extraAnno] == "" {
		out = append(out, "no pod annotation "+extraAnno+" (podAnnotations)")
	}
	if !slices.ContainsFunc(tmpl.Spec.Volumes, func(v corev1.Volume) bool { return v.Secret != nil && v.Secret.SecretName == extraVolume }) {
		out = append(out, "no volume of Secret "+extraVolume+" (extraVolumes)")
	}
	for _, ctr := range tmpl.Spec.Containers {
		if !slices.ContainsFunc(ctr.Env, func(e corev1.EnvVar) bool { return e.Name == extraEnv }) {
			out = append(out, "container "+ctr.Name+": no env "+extraEnv+" (extraEnv)")
		}
		if !slices.ContainsFunc(ctr.EnvFrom, func(e corev1.EnvFromSource) bool { return e.SecretRef != nil && e.SecretRef.Name == extraEnvSecret }) {
			out = append(out, "container "+ctr.Name+": no envFrom Secret "+extraEnvSecret+" (envFrom)")
		}
		if !slices.ContainsFunc(ctr.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == extraMount }) {
			out = append(out, "container "+ctr.Name+": nothing mounted at "+extraMount+" (extraVolumeMounts)")
		}
	}
	return out
}

// checkRole: the collector's pods run as a ServiceAccount of their own that carries the cloud
// role annotation (IRSA; Workload Identity reads one like it), so the EventBridge watcher and the
// AWS price source get credentials without keys in a Secret.
func checkRole(t *testing.T, cs kubernetes.Interface, w workload, sa string) {
	t.Helper()
	if sa == "" || sa == "default" {
		t.Errorf("%s runs as the namespace's default ServiceAccount: no role can be given to the collector alone", w)
		return
	}
	got, err := cs.CoreV1().ServiceAccounts(w.namespace).Get(context.Background(), sa, metav1.GetOptions{})
	if err != nil {
		t.Errorf("%s: ServiceAccount %s: %v", w, sa, err)
		return
	}
	if got.Annotations[irsaAnno] == "" {
		t.Errorf("%s: ServiceAccount %s has no %s annotation (annotations %v)", w, sa, irsaAnno, got.Annotations)
	}
}
