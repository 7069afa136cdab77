//go:build e2e

package helm_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/bursar-dev/bursar/internal/kubeenv"
)

// secretData gives a docs Secret's key its contents: the page's literal, or what the test puts
// in a file the page leaves to the user.
type secretData func(secret, key, literal string) []byte

// dummyData fills every key the page names: its literal, or "dummy".
func dummyData(_, _, literal string) []byte {
	if literal != "" {
		return []byte(literal)
	}
	return []byte("dummy")
}

// applyDocs runs the docs' steps against the API server: the release's namespace and those the
// objects name (a fleet location's namespace holds the user's workloads, so it exists), the
// Secrets the page tells the user to create, then the chart's objects, applied server-side with
// strict validation.
func applyDocs(t *testing.T, c *kubeenv.Cluster, in docsInstall, objs []*unstructured.Unstructured, data secretData) {
	t.Helper()
	cs := c.Client(t)
	namespaces := []string{in.namespace}
	for _, o := range objs {
		if ns := o.GetNamespace(); ns != "" && !slices.Contains(namespaces, ns) {
			namespaces = append(namespaces, ns)
		}
	}
	for _, ns := range namespaces {
		if _, err := cs.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			c.Namespace(t, ns)
		}
	}
	for _, s := range in.secrets {
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: in.namespace}, Data: map[string][]byte{}}
		for k, lit := range s.keys {
			sec.Data[k] = data(s.name, k, lit)
		}
		if _, err := cs.CoreV1().Secrets(in.namespace).Create(context.Background(), sec, metav1.CreateOptions{}); err != nil {
			t.Fatalf("the docs' Secret %s: %v", s.name, err)
		}
	}
	ros := make([]runtime.Object, len(objs))
	for i, o := range objs {
		ros[i] = o
	}
	c.Apply(t, ros...)
}

// workload is a rendered object that makes pods.
type workload struct{ kind, namespace, name string }

func (w workload) String() string { return w.kind + " " + w.namespace + "/" + w.name }

func workloads(objs []*unstructured.Unstructured) []workload {
	var ws []workload
	for _, o := range objs {
		switch o.GetKind() {
		case "Deployment", "DaemonSet", "StatefulSet", "Job", "CronJob":
			ws = append(ws, workload{o.GetKind(), o.GetNamespace(), o.GetName()})
		}
	}
	return ws
}

// appliedTemplate reads w's pod template back from the API server, as applied.
func appliedTemplate(t testing.TB, cs kubernetes.Interface, w workload) corev1.PodTemplateSpec {
	t.Helper()
	tmpl, err := readTemplate(context.Background(), cs, w)
	if err != nil {
		t.Fatalf("reading %s back: %v", w, err)
	}
	return tmpl
}

func readTemplate(ctx context.Context, cs kubernetes.Interface, w workload) (corev1.PodTemplateSpec, error) {
	get := metav1.GetOptions{}
	switch w.kind {
	case "Deployment":
		d, err := cs.AppsV1().Deployments(w.namespace).Get(ctx, w.name, get)
		if err != nil {
			return corev1.PodTemplateSpec{}, err
		}
		return d.Spec.Template, nil
	case "DaemonSet":
		d, err := cs.AppsV1().DaemonSets(w.namespace).Get(ctx, w.name, get)
		if err != nil {
			return corev1.PodTemplateSpec{}, err
		}
		return d.Spec.Template, nil
	case "StatefulSet":
		s, err := cs.AppsV1().StatefulSets(w.namespace).Get(ctx, w.name, get)
		if err != nil {
			return corev1.PodTemplateSpec{}, err
		}
		return s.Spec.Template, nil
	case "Job":
		j, err := cs.BatchV1().Jobs(w.namespace).Get(ctx, w.name, get)
		if err != nil {
			return corev1.PodTemplateSpec{}, err
		}
		return j.Spec.Template, nil
	case "CronJob":
		j, err := cs.BatchV1().CronJobs(w.namespace).Get(ctx, w.name, get)
		if err != nil {
			return corev1.PodTemplateSpec{}, err
		}
		return j.Spec.JobTemplate.Spec.Template, nil
	}
	return corev1.PodTemplateSpec{}, fmt.Errorf("a %s makes no pods", w.kind)
}

// reference is an object a pod needs before it can start: what it mounts, reads into its
// environment or runs as.
type reference struct {
	kind, name, key string // key: "" for the whole object
	where           string
}

// references lists what spec needs that must exist; optional ones are left out.
func references(spec corev1.PodSpec) []reference {
	var refs []reference
	sa := spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	refs = append(refs, reference{kind: "ServiceAccount", name: sa, where: "serviceAccountName"})
	for _, v := range spec.Volumes {
		where := "volume " + v.Name
		switch {
		case v.ConfigMap != nil && !isTrue(v.ConfigMap.Optional):
			refs = append(refs, keyRefs("ConfigMap", v.ConfigMap.Name, v.ConfigMap.Items, where)...)
		case v.Secret != nil && !isTrue(v.Secret.Optional):
			refs = append(refs, keyRefs("Secret", v.Secret.SecretName, v.Secret.Items, where)...)
		case v.Projected != nil:
			for _, src := range v.Projected.Sources {
				if src.ConfigMap != nil && !isTrue(src.ConfigMap.Optional) {
					refs = append(refs, keyRefs("ConfigMap", src.ConfigMap.Name, src.ConfigMap.Items, where)...)
				}
				if src.Secret != nil && !isTrue(src.Secret.Optional) {
					refs = append(refs, keyRefs("Secret", src.Secret.Name, src.Secret.Items, where)...)
				}
			}
		}
	}
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		for _, e := range c.Env {
			where := "container " + c.Name + " env " + e.Name
			switch f := e.ValueFrom; {
			case f == nil:
			case f.ConfigMapKeyRef != nil && !isTrue(f.ConfigMapKeyRef.Optional):
				refs = append(refs, reference{"ConfigMap", f.ConfigMapKeyRef.Name, f.ConfigMapKeyRef.Key, where})
			case f.SecretKeyRef != nil && !isTrue(f.SecretKeyRef.Optional):
				refs = append(refs, reference{"Secret", f.SecretKeyRef.Name, f.SecretKeyRef.Key, where})
			}
		}
		for _, e := range c.EnvFrom {
			where := "container " + c.Name + " envFrom"
			if e.ConfigMapRef != nil && !isTrue(e.ConfigMapRef.Optional) {
				refs = append(refs, reference{kind: "ConfigMap", name: e.ConfigMapRef.Name, where: where})
			}
			if e.SecretRef != nil && !isTrue(e.SecretRef.Optional) {
				refs = append(refs, reference{kind: "Secret", name: e.SecretRef.Name, where: where})
			}
		}
	}
	return refs
}

func keyRefs(kind, name string, items []corev1.KeyToPath, where string) []reference {
	if len(items) == 0 {
		return []reference{{kind: kind, name: name, where: where}}
	}
	var refs []reference
	for _, it := range items {
		refs = append(refs, reference{kind, name, it.Key, where})
	}
	return refs
}

func isTrue(b *bool) bool { return b != nil && *b }

// missingRefs checks each reference against the API server and says what a pod would wait for.
func missingRefs(cs kubernetes.Interface, namespace string, refs []reference) []string {
	ctx, get := context.Background(), metav1.GetOptions{}
	var out []string
	for _, r := range refs {
		var keys map[string]bool
		var err error
		switch r.kind {
		case "ServiceAccount":
			_, err = cs.CoreV1().ServiceAccounts(namespace).Get(ctx, r.name, get)
		case "ConfigMap":
			var cm *corev1.ConfigMap
			if cm, err = cs.CoreV1().ConfigMaps(namespace).Get(ctx, r.name, get); err == nil {
				keys = setOf(cm.Data, cm.BinaryData)
			}
		case "Secret":
			var s *corev1.Secret
			if s, err = cs.CoreV1().Secrets(namespace).Get(ctx, r.name, get); err == nil {
				keys = setOf(s.Data, map[string]string(nil))
			}
		}
		switch {
		case apierrors.IsNotFound(err):
			out = append(out, fmt.Sprintf("%s: %s %s does not exist", r.where, r.kind, r.name))
		case err != nil:
			out = append(out, fmt.Sprintf("%s: reading %s %s: %v", r.where, r.kind, r.name, err))
		case r.key != "" && !keys[r.key]:
			out = append(out, fmt.Sprintf("%s: %s %s has no key %q", r.where, r.kind, r.name, r.key))
		}
	}
	return out
}

func setOf[V any, W any](a map[string]V, b map[string]W) map[string]bool {
	s := map[string]bool{}
	for k := range a {
		s[k] = true
	}
	for k := range b {
		s[k] = true
	}
	return s
}

// checkPodsCanStart fails the test for every rendered workload whose pods would wait for an
// object that does not exist.
func checkPodsCanStart(t *testing.T, cs kubernetes.Interface, objs []*unstructured.Unstructured) {
	t.Helper()
	ws := workloads(objs)
	if len(ws) == 0 {
		t.Fatal("the release makes no pods")
	}
	for _, w := range ws {
		tmpl := appliedTemplate(t, cs, w)
		for _, m := range missingRefs(cs, w.namespace, references(tmpl.Spec)) {
			t.Errorf("%s cannot start: %s", w, m)
		}
	}
}

// withoutSlack is the install with step 3 (Slack, optional) skipped.
func withoutSlack(in docsInstall) docsInstall {
	out := in
	out.secrets = slices.DeleteFunc(slices.Clone(in.secrets), func(s docsSecret) bool { return strings.Contains(s.name, "slack") })
	out.sets = slices.DeleteFunc(slices.Clone(in.sets), func(s string) bool { return strings.HasPrefix(s, "slack.") })
	out.drop = append(slices.Clone(in.drop), "slack") // "leave out for no Slack"
	return out
}

// slackHTTP is the install with Slack's HTTP mode, the page's other choice: its Secret (the
// alternative with the signing secret) and its values block, as -f slack-http.yaml after the
// others.
func slackHTTP(t *testing.T, in docsInstall) (docsInstall, string) {
	t.Helper()
	out := in
	i := slices.IndexFunc(in.alternatives, func(s docsSecret) bool { _, ok := s.keys["signing-secret"]; return ok })
	j := slices.IndexFunc(in.yamls, func(y string) bool { return strings.Contains(y, "mode: http") })
	if i < 0 || j < 0 {
		t.Fatalf("docs/deploy.md offers no Slack HTTP mode (a Secret with signing-secret and values with slack.mode http) beside Socket Mode")
	}
	out.secrets = slices.Clone(in.secrets)
	for k, s := range out.secrets {
		if s.name == in.alternatives[i].name {
			out.secrets[k] = in.alternatives[i]
		}
	}
	out.bodies = maps.Clone(in.bodies)
	out.bodies["slack-http.yaml"] = in.yamls[j]
	return out, "slack-http.yaml"
}
