// Package helm_test renders the Bursar chart with Helm's own library, decodes every object it
// renders strictly into its Kubernetes API type, and lints it as "helm lint" does.
package helm_test

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/bursar-dev/bursar/internal/fleet"
)

const chartDir = "bursar"

// types are the Go types of every kind the chart renders.
var types = map[string]func() any{
	"v1/ConfigMap":                                    func() any { return &corev1.ConfigMap{} },
	"v1/Service":                                      func() any { return &corev1.Service{} },
	"v1/ServiceAccount":                               func() any { return &corev1.ServiceAccount{} },
	"apps/v1/Deployment":                              func() any { return &appsv1.Deployment{} },
	"apps/v1/DaemonSet":                               func() any { return &appsv1.DaemonSet{} },
	"batch/v1/CronJob":                                func() any { return &batchv1.CronJob{} },
	"policy/v1/PodDisruptionBudget":                   func() any { return &policyv1.PodDisruptionBudget{} },
	"rbac.authorization.k8s.io/v1/Role":               func() any { return &rbacv1.Role{} },
	"rbac.authorization.k8s.io/v1/RoleBinding":        func() any { return &rbacv1.RoleBinding{} },
	"rbac.authorization.k8s.io/v1/ClusterRole":        func() any { return &rbacv1.ClusterRole{} },
	"rbac.authorization.k8s.io/v1/ClusterRoleBinding": func() any { return &rbacv1.ClusterRoleBinding{} },
	"monitoring.coreos.com/v1/ServiceMonitor":         func() any { return &monitoringv1.ServiceMonitor{} },
	"networking.k8s.io/v1/Ingress":                    func() any { return &networkingv1.Ingress{} },
}

// render renders the chart with values over its defaults and decodes every object strictly:
// a field its type does not have fails the test. It returns the objects by kind/name.
func render(t *testing.T, values string) map[string]any {
	t.Helper()
	files, err := renderFiles(t, values)
	if err != nil {
		t.Fatalf("rendering: %v", err)
	}
	objs := map[string]any{}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		for i, doc := range strings.Split(files[name], "\n---") {
			if strings.TrimSpace(strings.TrimPrefix(doc, "---")) == "" || strings.HasSuffix(name, "NOTES.txt") {
				continue
			}
			kind, obj := decode(t, fmt.Sprintf("%s#%d", name, i), []byte(doc))
			objs[kind] = obj
		}
	}
	return objs
}

// renderFiles renders the chart as "helm template" does, checking the values against
// values.schema.json first: the rendered text by template file, or the error helm would print.
func renderFiles(t *testing.T, values string) (map[string]string, error) {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := common.ReadValues([]byte(values))
	if err != nil {
		t.Fatal(err)
	}
	rv, err := util.ToRenderValues(ch, vals, common.ReleaseOptions{Name: "bursar", Namespace: "bursar", IsInstall: true},
		common.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	return engine.Render(ch, rv)
}

func decode(t *testing.T, where string, doc []byte) (string, any) {
	t.Helper()
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		t.Fatalf("%s: %v\n%s", where, err, doc)
	}
	mk, ok := types[head.APIVersion+"/"+head.Kind]
	if !ok {
		t.Fatalf("%s: %s %s has no Go type in this test: add it", where, head.APIVersion, head.Kind)
	}
	obj := mk()
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		t.Fatalf("%s: %s does not decode strictly: %v\n%s", where, head.Kind, err, doc)
	}
	key := head.Kind + "/" + head.Metadata.Name
	if head.Metadata.Namespace != "" {
		key += "@" + head.Metadata.Namespace
	}
	return key, obj
}

// valueSets are the shapes a release takes: the defaults, everything on, the least.
var valueSets = map[string]string{
	"defaults": "",
	"everything": `
slack: {secret: bursar-slack, channel: C0ALERTS, mode: http}
nats: {tlsCASecret: nats-ca}
kube: {kubeconfigSecret: bursar-kubeconfigs}
arbiter:
  slackListen: ":8080"
  slackIngress: {enabled: true, className: nginx, host: bursar.example.com, tls: {secretName: bursar-tls},
    annotations: {cert-manager.io/cluster-issuer: letsencrypt}}
  fleet:
    locations:
      - {name: home, provider: aws, region: us-east-1, actuator: {kind: kubernetes, namespace: inference}}
      - {name: home-batch, provider: aws, region: us-east-1, actuator: {kind: kubernetes, namespace: batch}}
      - {name: home-again, provider: aws, region: us-east-1, actuator: {kind: kubernetes, namespace: inference}}
      - {name: far, provider: gcp, region: europe-west4, actuator: {kind: kubernetes, kubeconfig: /etc/bursar/kubeconfigs/far, namespace: far}}
      - {name: sim, provider: aws, region: us-west-2, actuator: {kind: sim}}
    workloads:
      - {name: llm, gpu: {models: [H100-80GB], count: 1}, replicas: {min: 1, max: 4}, markets: [spot, on_demand],
         kubernetes: {spot: llm-spot, on_demand: llm-od}}
      - {name: batch, gpu: {models: [A100-80GB], count: 1}, replicas: {min: 0, max: 2}, markets: [reserved],
         kubernetes: {kind: StatefulSet, reserved: batch-rsv}}
      - {name: tune, kind: job, gpu: {models: [H100-80GB], count: 1}, markets: [spot, on_demand],
         job: {work: 48h, deadline_in: 52h, overhead: 3m}, kubernetes: {kind: Job, spot: tune-spot, on_demand: tune-od}}
collector: {gpu: {hostNetwork: true, runtimeClassName: nvidia}}
report: {mode: cronjob}
serviceMonitor: {enabled: true, labels: {release: prometheus}}
imagePullSecrets: [{name: ghcr}]
`,
	"jobs only": `
arbiter:
  fleet:
    locations:
      - {name: home, provider: aws, region: us-east-1, actuator: {kind: kubernetes, namespace: train}}
    workloads:
      - {name: tune, kind: job, gpu: {models: [H100-80GB], count: 1}, markets: [spot],
         job: {work: 10h, deadline_in: 20h, overhead: 5m}, kubernetes: {kind: Job, spot: tune-spot}}
`,
	"arbiter only": `
collector: {gpu: {enabled: false}, prices: {enabled: false}}
report: {enabled: false}
`,
}

func TestChartRendersObjectsThatDecodeStrictly(t *testing.T) {
	for name, values := range valueSets {
		t.Run(name, func(t *testing.T) {
			objs := render(t, values)
			if _, ok := objs["Deployment/bursar-arbiter"]; !ok {
				t.Fatalf("no arbiter Deployment among %v", slices.Sorted(maps.Keys(objs)))
			}
		})
	}
}

func TestArbiterIsHighlyAvailableAndProbed(t *testing.T) {
	objs := render(t, valueSets["everything"])
	d := objs["Deployment/bursar-arbiter"].(*appsv1.Deployment)
	if *d.Spec.Replicas != 2 {
		t.Errorf("arbiter replicas = %d, want 2 (leader and standby)", *d.Spec.Replicas)
	}
	c := d.Spec.Template.Spec.Containers[0]
	if c.Image != "ghcr.io/bursar-dev/bursar:v0.1.0" {
		t.Errorf("image = %s, want the release tag of the chart's appVersion", c.Image)
	}
	if c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe.HTTPGet.Path != "/livez" {
		t.Errorf("probes = %s, %s; want /readyz and /livez", c.ReadinessProbe.HTTPGet.Path, c.LivenessProbe.HTTPGet.Path)
	}
	sc := d.Spec.Template.Spec.SecurityContext
	if sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || !*c.SecurityContext.ReadOnlyRootFilesystem {
		t.Error("the arbiter may run as root or write its root filesystem")
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	for _, k := range []string{"BURSAR_CLICKHOUSE_PASSWORD_FILE", "BURSAR_SLACK_BOT_TOKEN_FILE", "BURSAR_NATS_NKEY"} {
		if !strings.HasPrefix(env[k], "/var/run/secrets/bursar/") {
			t.Errorf("%s = %q, want a file mounted from a Secret", k, env[k])
		}
	}
	for k := range env {
		if strings.Contains(k, "PASSWORD") && !strings.HasSuffix(k, "_FILE") || strings.HasSuffix(k, "TOKEN") {
			t.Errorf("%s carries a secret in the environment; want its _FILE variant", k)
		}
	}
	pdb := objs["PodDisruptionBudget/bursar-arbiter"].(*policyv1.PodDisruptionBudget)
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 || pdb.Spec.MinAvailable != nil {
		t.Errorf("PDB = %+v, want maxUnavailable 1", pdb.Spec)
	}
	if _, ok := objs["CronJob/bursar-report"]; !ok {
		t.Error("report.mode cronjob rendered no CronJob")
	}
	ds := objs["DaemonSet/bursar-collector-gpu"].(*appsv1.DaemonSet)
	if !ds.Spec.Template.Spec.HostNetwork || ds.Spec.Template.Spec.NodeSelector["nvidia.com/gpu.present"] != "true" {
		t.Errorf("the GPU collector is not on the GPU nodes' network: %+v", ds.Spec.Template.Spec.NodeSelector)
	}
}

// TestRoleGrantsScaleAndNothingMore: in each namespace of a location in this cluster, and no
// other, the arbiter may read and set the scale of the objects the fleet names, read them, read
// and update its jobs' Jobs, list pods and create Events (on the objects it changed);
// cluster-wide only get nodes.
func TestRoleGrantsScaleAndNothingMore(t *testing.T) {
	objs := render(t, valueSets["everything"])
	names := []string{"batch-rsv", "llm-od", "llm-spot"}
	want := []rbacv1.PolicyRule{
		{APIGroups: []string{"apps"}, Resources: []string{"deployments/scale", "statefulsets/scale"}, ResourceNames: names, Verbs: []string{"get", "update"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments", "statefulsets"}, ResourceNames: names, Verbs: []string{"get"}},
		{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, ResourceNames: []string{"tune-od", "tune-spot"}, Verbs: []string{"get", "update"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}},
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create"}},
	}
	var roles []string
	for k := range objs {
		if strings.HasPrefix(k, "Role/") {
			roles = append(roles, k)
		}
	}
	if slices.Sort(roles); !slices.Equal(roles, []string{"Role/bursar-arbiter@batch", "Role/bursar-arbiter@inference"}) {
		t.Errorf("roles = %v, want one in each namespace of this cluster's locations (none for far)", roles)
	}
	for _, ns := range []string{"inference", "batch"} {
		r, ok := objs["Role/bursar-arbiter@"+ns].(*rbacv1.Role)
		if !ok {
			t.Fatalf("no Role in namespace %s", ns)
		}
		if fmt.Sprint(r.Rules) != fmt.Sprint(want) {
			t.Errorf("Role in %s = %v, want %v", ns, r.Rules, want)
		}
		rb := objs["RoleBinding/bursar-arbiter@"+ns].(*rbacv1.RoleBinding)
		if s := rb.Subjects[0]; s.Kind != "ServiceAccount" || s.Name != "bursar-arbiter" || s.Namespace != "bursar" {
			t.Errorf("RoleBinding in %s binds %+v, want the arbiter's ServiceAccount", ns, s)
		}
	}
	cr := objs["ClusterRole/bursar-arbiter-nodes"].(*rbacv1.ClusterRole)
	if fmt.Sprint(cr.Rules) != fmt.Sprint([]rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get"}}}) {
		t.Errorf("ClusterRole = %v, want get nodes only", cr.Rules)
	}
}

// TestRoleNeverGrantsEveryObject: a rule that names objects names at least one, in every value
// set (a rule with an empty resourceNames grants every object of its kind).
func TestRoleNeverGrantsEveryObject(t *testing.T) {
	for name, values := range valueSets {
		for k, o := range render(t, values) {
			r, ok := o.(*rbacv1.Role)
			if !ok {
				continue
			}
			for _, rule := range r.Rules {
				byName := !slices.Contains(rule.Resources, "pods") && !slices.Contains(rule.Resources, "events") // list and create take no name
				if byName && len(rule.ResourceNames) == 0 {
					t.Errorf("%s: %s grants every %v", name, k, rule.Resources)
				}
			}
		}
	}
}

// TestFleetConfigMapIsAValidFleetFile: the fleet file each value set renders passes the
// arbiter's own checks; the default's kubernetes location is reached in-cluster.
func TestFleetConfigMapIsAValidFleetFile(t *testing.T) {
	for name, values := range valueSets {
		cm := render(t, values)["ConfigMap/bursar-arbiter"].(*corev1.ConfigMap)
		cfg, err := fleet.Parse([]byte(cm.Data["bursar.yaml"]), "bursar.yaml")
		if err != nil {
			t.Fatalf("%s: the chart's fleet file: %v\n%s", name, err, cm.Data["bursar.yaml"])
		}
		if a := cfg.Locations[0].Actuator; a.Kind != fleet.KindKubernetes || a.Context != "" || a.Kubeconfig != "" {
			t.Errorf("%s: first location's actuator = %+v, want kubernetes in this cluster", name, a)
		}
	}
}

// TestChartLints runs helm's linter over the chart with each value set: no warning or error.
func TestChartLints(t *testing.T) {
	for name, values := range valueSets {
		t.Run(name, func(t *testing.T) {
			vals, err := common.ReadValues([]byte(values))
			if err != nil {
				t.Fatal(err)
			}
			res := lint.RunAll(chartDir, vals, "bursar")
			var b bytes.Buffer
			for _, m := range res.Messages {
				if m.Severity >= support.WarningSev {
					fmt.Fprintln(&b, m)
				}
			}
			if b.Len() > 0 {
				t.Errorf("helm lint:\n%s", b.String())
			}
		})
	}
}
