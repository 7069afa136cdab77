package helm_test

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
)

// pods are the pod templates of every workload rendered, by kind/name.
func pods(objs map[string]any) map[string]corev1.PodTemplateSpec {
	m := map[string]corev1.PodTemplateSpec{}
	for k, o := range objs {
		switch w := o.(type) {
		case *appsv1.Deployment:
			m[k] = w.Spec.Template
		case *appsv1.DaemonSet:
			m[k] = w.Spec.Template
		case *batchv1.CronJob:
			m[k] = w.Spec.JobTemplate.Spec.Template
		}
	}
	return m
}

// extended sets every extension point chart-wide and on each workload; the report runs as a
// CronJob, so that both report shapes are covered with the Deployment of "defaults".
const extended = `
slack: {secret: bursar-slack, channel: C0ALERTS}
extraEnv: [{name: CHART_WIDE, value: "1"}]
envFrom: [{secretRef: {name: price-api-keys}}]
extraVolumes: [{name: contracts, secret: {secretName: bursar-contracts}}]
extraVolumeMounts: [{name: contracts, mountPath: /etc/bursar-contracts, readOnly: true}]
podAnnotations: {example.com/team: finops, example.com/overridden: chart}
podLabels: {example.com/cost-center: "42"}
priorityClassName: chart-wide
topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}]
arbiter: &own
  extraEnv: [{name: OWN, value: "2"}]
  envFrom: [{configMapRef: {name: own}}]
  extraVolumes: [{name: own, configMap: {name: own}}]
  extraVolumeMounts: [{name: own, mountPath: /etc/own}]
  podAnnotations: {example.com/overridden: workload}
  podLabels: {example.com/own: "yes"}
  priorityClassName: own
  topologySpreadConstraints: [{maxSkew: 2, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule}]
collector: {gpu: *own, prices: *own}
report:
  <<: *own
  mode: cronjob
`

// TestEveryWorkloadTakesTheExtensionPoints: webhook secrets, price-API keys, contract and
// catalog files had no way into the pods. Every workload takes extraEnv, envFrom, extraVolumes,
// extraVolumeMounts, podAnnotations, podLabels, priorityClassName and
// topologySpreadConstraints, chart-wide and its own: lists add up, maps merge with the
// workload's winning, its own priority class and constraints replace the chart-wide ones, and a
// constraint selects the workload's own pods.
func TestEveryWorkloadTakesTheExtensionPoints(t *testing.T) {
	all := pods(render(t, extended))
	if names := slices.Sorted(maps.Keys(all)); !slices.Equal(names, []string{"CronJob/bursar-report",
		"DaemonSet/bursar-collector-gpu", "Deployment/bursar-arbiter", "Deployment/bursar-collector-prices"}) {
		t.Fatalf("workloads = %v", names)
	}
	for name, p := range all {
		spec, c := p.Spec, p.Spec.Containers[0]
		e := env(c)
		if e["CHART_WIDE"] != "1" || e["OWN"] != "2" {
			t.Errorf("%s: env lacks the chart-wide or its own extraEnv: %v", name, e)
		}
		if len(c.EnvFrom) != 2 || c.EnvFrom[0].SecretRef.Name != "price-api-keys" || c.EnvFrom[1].ConfigMapRef.Name != "own" {
			t.Errorf("%s: envFrom = %+v, want the chart-wide Secret then its own ConfigMap", name, c.EnvFrom)
		}
		mounts := map[string]string{}
		for _, m := range c.VolumeMounts {
			mounts[m.Name] = m.MountPath
		}
		vols := map[string]bool{}
		for _, v := range spec.Volumes {
			vols[v.Name] = true
		}
		if mounts["contracts"] != "/etc/bursar-contracts" || mounts["own"] != "/etc/own" || !vols["contracts"] || !vols["own"] {
			t.Errorf("%s: mounts %v, volumes %v, want contracts and own", name, mounts, vols)
		}
		a, l := p.Annotations, p.Labels
		if a["example.com/team"] != "finops" || a["example.com/overridden"] != "workload" || l["example.com/cost-center"] != "42" || l["example.com/own"] != "yes" {
			t.Errorf("%s: annotations %v, labels %v", name, a, l)
		}
		if spec.PriorityClassName != "own" {
			t.Errorf("%s: priorityClassName = %q, want its own", name, spec.PriorityClassName)
		}
		tsc := spec.TopologySpreadConstraints
		if len(tsc) != 1 || tsc[0].MaxSkew != 2 || tsc[0].LabelSelector == nil ||
			!maps.Equal(tsc[0].LabelSelector.MatchLabels, selectorOf(p)) {
			t.Errorf("%s: topologySpreadConstraints = %+v, want its own, selecting its pods", name, tsc)
		}
	}
	for name, p := range pods(render(t, `{priorityClassName: chart-wide, topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}]}`)) {
		if p.Spec.PriorityClassName != "chart-wide" || len(p.Spec.TopologySpreadConstraints) != 1 ||
			!maps.Equal(p.Spec.TopologySpreadConstraints[0].LabelSelector.MatchLabels, selectorOf(p)) {
			t.Errorf("%s: without its own, want the chart-wide priority class and constraint: %+v", name, p.Spec)
		}
	}
}

// selectorOf is the part of a pod's labels the chart selects its workload by.
func selectorOf(p corev1.PodTemplateSpec) map[string]string {
	m := map[string]string{}
	for _, k := range []string{"app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/component"} {
		m[k] = p.Labels[k]
	}
	return m
}

// TestCollectorHasAServiceAccountForItsCloudIdentity: IRSA and Workload Identity annotate a
// ServiceAccount; the collector had none of its own. Both collector workloads run as one the
// chart makes with collector.serviceAccount.annotations (or a named one), and still mount no
// Kubernetes token: they call no Kubernetes API.
func TestCollectorHasAServiceAccountForItsCloudIdentity(t *testing.T) {
	objs := render(t, `collector: {serviceAccount: {annotations: {eks.amazonaws.com/role-arn: "arn:aws:iam::111122223333:role/bursar-collector"}}}`)
	sa, ok := objs["ServiceAccount/bursar-collector"].(*corev1.ServiceAccount)
	if !ok || sa.Annotations["eks.amazonaws.com/role-arn"] == "" {
		t.Fatalf("collector ServiceAccount = %+v, want one with the role annotation", sa)
	}
	for _, name := range []string{"DaemonSet/bursar-collector-gpu", "Deployment/bursar-collector-prices"} {
		p := pods(objs)[name].Spec
		if p.ServiceAccountName != "bursar-collector" || p.AutomountServiceAccountToken == nil || *p.AutomountServiceAccountToken {
			t.Errorf("%s: serviceAccountName %q, automount %v; want bursar-collector, no token", name, p.ServiceAccountName, p.AutomountServiceAccountToken)
		}
	}
	objs = render(t, `collector: {serviceAccount: {create: false, name: platform-collector}}`)
	if _, ok := objs["ServiceAccount/bursar-collector"]; ok {
		t.Error("create false still made a ServiceAccount")
	}
	if n := pods(objs)["DaemonSet/bursar-collector-gpu"].Spec.ServiceAccountName; n != "platform-collector" {
		t.Errorf("serviceAccountName = %q, want the named one", n)
	}
}

// TestNameOverrides: fullnameOverride names every object; nameOverride the chart's part of the
// names and its app.kubernetes.io/name label; a release named for the chart is not repeated.
func TestNameOverrides(t *testing.T) {
	for _, tt := range []struct{ values, wantName, wantApp string }{
		{"", "bursar-arbiter", "bursar"},
		{"fullnameOverride: finops", "finops-arbiter", "bursar"},
		{"nameOverride: gpu-spend", "bursar-gpu-spend-arbiter", "gpu-spend"},
	} {
		objs := render(t, tt.values)
		d, ok := objs["Deployment/"+tt.wantName].(*appsv1.Deployment)
		if !ok {
			t.Errorf("%q: no Deployment %s among %v", tt.values, tt.wantName, slices.Sorted(maps.Keys(objs)))
			continue
		}
		if got := d.Spec.Template.Labels["app.kubernetes.io/name"]; got != tt.wantApp {
			t.Errorf("%q: app.kubernetes.io/name = %q, want %q", tt.values, got, tt.wantApp)
		}
		if _, ok := objs["ClusterRole/"+tt.wantName+"-nodes"]; !ok {
			t.Errorf("%q: the ClusterRole does not follow the name", tt.values)
		}
	}
}

// TestEveryReferenceIsRendered: with the arbiter off, the report mounted the arbiter's
// ConfigMap, which did not exist, and never started. In every value set, each ConfigMap a pod
// mounts and each ServiceAccount it runs as is rendered by the release (or named by the user).
func TestEveryReferenceIsRendered(t *testing.T) {
	sets := maps.Clone(valueSets)
	sets["report only"] = `{arbiter: {enabled: false}, collector: {gpu: {enabled: false}, prices: {enabled: false}}}`
	sets["report cronjob, no arbiter"] = `{arbiter: {enabled: false}, report: {mode: cronjob}, slack: {secret: s, channel: C0A}}`
	sets["extended"] = extended
	for set, values := range sets {
		objs := render(t, values)
		for name, p := range pods(objs) {
			for _, v := range p.Spec.Volumes {
				if cm := v.ConfigMap; cm != nil && cm.Name != "own" && objs["ConfigMap/"+cm.Name] == nil {
					t.Errorf("%s: %s mounts ConfigMap %s, which is not rendered", set, name, cm.Name)
				}
			}
			if sa := p.Spec.ServiceAccountName; sa != "" && objs["ServiceAccount/"+sa] == nil {
				t.Errorf("%s: %s runs as ServiceAccount %s, which is not rendered", set, name, sa)
			}
		}
	}
}

// TestPDBNeverBlocksADrain: minAvailable 1 on one arbiter replica let no node drain finish.
// The PDB is maxUnavailable 1 by default, minAvailable only below the replicas, else none.
func TestPDBNeverBlocksADrain(t *testing.T) {
	for _, tt := range []struct {
		values         string
		wantPDB        bool
		wantMaxUnavail int
		wantMinAvail   int
	}{
		{"", true, 1, 0},
		{"arbiter: {replicas: 1}", true, 1, 0},
		{"arbiter: {replicas: 1, podDisruptionBudget: {minAvailable: 1}}", false, 0, 0},
		{"arbiter: {replicas: 2, podDisruptionBudget: {minAvailable: 2}}", false, 0, 0},
		{"arbiter: {replicas: 3, podDisruptionBudget: {minAvailable: 2}}", true, 0, 2},
		{"arbiter: {podDisruptionBudget: {enabled: false}}", false, 0, 0},
	} {
		pdb, ok := render(t, tt.values)["PodDisruptionBudget/bursar-arbiter"].(*policyv1.PodDisruptionBudget)
		if ok != tt.wantPDB {
			t.Errorf("%q: PDB rendered %v, want %v", tt.values, ok, tt.wantPDB)
			continue
		}
		if !ok {
			continue
		}
		if s := pdb.Spec; tt.wantMaxUnavail > 0 && (s.MaxUnavailable == nil || s.MaxUnavailable.IntValue() != tt.wantMaxUnavail || s.MinAvailable != nil) ||
			tt.wantMinAvail > 0 && (s.MinAvailable == nil || s.MinAvailable.IntValue() != tt.wantMinAvail || s.MaxUnavailable != nil) {
			t.Errorf("%q: PDB spec = %+v", tt.values, s)
		}
	}
}

// TestNotesWaitAndForwardInTheBackground: NOTES.txt's "port-forward ... && curl" never reached
// its curl, since port-forward does not return. It waits for the rollout, forwards in the
// background, waits for the forward, then asks /readyz and stops the forward; with the arbiter
// off it does not name it.
func TestNotesWaitAndForwardInTheBackground(t *testing.T) {
	files, err := renderFiles(t, "")
	if err != nil {
		t.Fatal(err)
	}
	notes := files["bursar/templates/NOTES.txt"]
	order := regexp.MustCompile(`(?s)rollout status deploy/bursar-arbiter.*port-forward svc/bursar-arbiter 9464[^\n]*& pf=\$!\n\s*sleep \d+; curl -s localhost:9464/readyz; kill \$pf`)
	if !order.MatchString(notes) {
		t.Errorf("NOTES.txt does not wait, forward in the background, then curl:\n%s", notes)
	}
	if files, err = renderFiles(t, "arbiter: {enabled: false}"); err != nil {
		t.Fatal(err)
	}
	if notes := files["bursar/templates/NOTES.txt"]; strings.Contains(notes, "bursar-arbiter") {
		t.Errorf("NOTES.txt names the arbiter that is not installed:\n%s", notes)
	}
}

// TestNATSCredentialsFollowTheAuth: the programs read the role's nkey seed (nats.auth nkey, the
// accounts of deploy/nats/accounts.conf) or .creds file (creds), each mounted alone from the
// credentials Secret; nats.insecure sets BURSAR_NATS_INSECURE; nats.auth none needs it.
func TestNATSCredentialsFollowTheAuth(t *testing.T) {
	for _, tt := range []struct {
		values, wantVar, wantKey string
		wantInsecure             bool
	}{
		{"", "BURSAR_NATS_NKEY", "arbiter.nk", false},
		{"nats: {auth: creds}", "BURSAR_NATS_CREDS", "arbiter.creds", false},
		{"nats: {auth: none, insecure: true}", "", "", true},
	} {
		spec := arbiterPod(t, render(t, tt.values))
		e := env(spec.Containers[0])
		if tt.wantVar != "" && e[tt.wantVar] != "/var/run/secrets/bursar/nats/"+tt.wantKey {
			t.Errorf("%q: %s = %q, want the mounted %s", tt.values, tt.wantVar, e[tt.wantVar], tt.wantKey)
		}
		keys := secretKeys(spec, "nats-creds")
		if tt.wantKey != "" && !slices.Equal(keys, []string{tt.wantKey}) || tt.wantKey == "" && keys != nil {
			t.Errorf("%q: NATS keys mounted = %v, want %q", tt.values, keys, tt.wantKey)
		}
		if _, ok := e["BURSAR_NATS_INSECURE"]; ok != tt.wantInsecure {
			t.Errorf("%q: BURSAR_NATS_INSECURE set %v, want %v", tt.values, ok, tt.wantInsecure)
		}
	}
	if _, err := renderFiles(t, "nats: {auth: none}"); err == nil || !strings.Contains(err.Error(), "nats.insecure") {
		t.Errorf("nats.auth none without nats.insecure = %v, want a refusal naming nats.insecure", err)
	}
}
