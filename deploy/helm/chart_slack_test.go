package helm_test

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// env is a container's environment by name (values only; valueFrom entries map to "").
func env(c corev1.Container) map[string]string {
	m := map[string]string{}
	for _, e := range c.Env {
		m[e.Name] = e.Value
	}
	return m
}

// secretKeys are the keys a pod mounts from the volume named name.
func secretKeys(spec corev1.PodSpec, name string) []string {
	var keys []string
	for _, v := range spec.Volumes {
		if v.Name == name && v.Secret != nil {
			for _, it := range v.Secret.Items {
				keys = append(keys, it.Key)
			}
		}
	}
	return keys
}

func arbiterPod(t *testing.T, objs map[string]any) corev1.PodSpec {
	t.Helper()
	d, ok := objs["Deployment/bursar-arbiter"].(*appsv1.Deployment)
	if !ok {
		t.Fatal("no arbiter Deployment")
	}
	return d.Spec.Template.Spec
}

// TestSlackSocketModeMountsTheAppToken: Slack as docs/deploy.md's step 3 configures it, with
// the default mode, is Socket Mode: the arbiter needs the app-level token, and the chart gave it
// none (it exited "socket mode needs an app-level token" after NATS and the migrations). It
// mounts the Secret's app-token and sets BURSAR_SLACK_APP_TOKEN_FILE, and asks for no signing
// secret and no endpoint.
func TestSlackSocketModeMountsTheAppToken(t *testing.T) {
	spec := arbiterPod(t, render(t, `slack: {secret: bursar-slack, channel: C0ALERTS}`))
	c := spec.Containers[0]
	e := env(c)
	if e["BURSAR_SLACK_APP_TOKEN_FILE"] != "/var/run/secrets/bursar/slack/app-token" {
		t.Errorf("BURSAR_SLACK_APP_TOKEN_FILE = %q, want the Secret's app-token", e["BURSAR_SLACK_APP_TOKEN_FILE"])
	}
	if _, ok := e["BURSAR_SLACK_SIGNING_SECRET_FILE"]; ok {
		t.Error("Socket Mode reads BURSAR_SLACK_SIGNING_SECRET_FILE: a Secret without signing-secret would fail the arbiter")
	}
	if keys := secretKeys(spec, "slack"); !slices.Equal(keys, []string{"bot-token", "app-token"}) {
		t.Errorf("slack keys mounted = %v, want bot-token and app-token", keys)
	}
	for _, a := range c.Args {
		if strings.HasPrefix(a, "--slack-listen") {
			t.Errorf("Socket Mode with %s: the arbiter would serve HTTP instead", a)
		}
	}
}

// TestSlackHTTPModeHasAPortAndAnIngress: slack.mode http serves POST /slack/interactions on
// arbiter.slackListen (default :8080), behind the Service's port "slack" and an Ingress for that
// path only, with TLS; the arbiter reads the signing secret and no app token.
func TestSlackHTTPModeHasAPortAndAnIngress(t *testing.T) {
	objs := render(t, `
slack: {secret: bursar-slack, channel: C0ALERTS, mode: http}
arbiter:
  slackIngress: {enabled: true, className: nginx, host: bursar.example.com, tls: {secretName: bursar-tls},
    annotations: {cert-manager.io/cluster-issuer: letsencrypt}}
`)
	spec := arbiterPod(t, objs)
	c := spec.Containers[0]
	if !slices.Contains(c.Args, "--slack-listen=:8080") {
		t.Errorf("args = %v, want --slack-listen=:8080", c.Args)
	}
	if e := env(c); e["BURSAR_SLACK_SIGNING_SECRET_FILE"] == "" || e["BURSAR_SLACK_APP_TOKEN_FILE"] != "" {
		t.Errorf("env = %v, want the signing secret's file and no app token", e)
	}
	if keys := secretKeys(spec, "slack"); !slices.Equal(keys, []string{"bot-token", "signing-secret"}) {
		t.Errorf("slack keys mounted = %v, want bot-token and signing-secret", keys)
	}
	if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == "slack" && p.ContainerPort == 8080 }) {
		t.Errorf("container ports = %v, want slack on 8080", c.Ports)
	}
	svc := objs["Service/bursar-arbiter"].(*corev1.Service)
	if !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == "slack" && p.TargetPort.StrVal == "slack" }) {
		t.Errorf("Service ports = %v, want one named slack", svc.Spec.Ports)
	}
	ing, ok := objs["Ingress/bursar-arbiter-slack"].(*networkingv1.Ingress)
	if !ok {
		t.Fatal("no Ingress for the Slack endpoint")
	}
	rule := ing.Spec.Rules[0]
	path := rule.HTTP.Paths[0]
	if rule.Host != "bursar.example.com" || len(rule.HTTP.Paths) != 1 || path.Path != "/slack/interactions" ||
		*path.PathType != networkingv1.PathTypeExact || path.Backend.Service.Name != "bursar-arbiter" || path.Backend.Service.Port.Name != "slack" {
		t.Errorf("Ingress rule = %+v, want only POST /slack/interactions on bursar.example.com to the arbiter's slack port", rule)
	}
	if *ing.Spec.IngressClassName != "nginx" || ing.Spec.TLS[0].SecretName != "bursar-tls" || ing.Annotations["cert-manager.io/cluster-issuer"] != "letsencrypt" {
		t.Errorf("Ingress = %+v, want class nginx, TLS from bursar-tls and the annotations", ing.Spec)
	}
}

// TestSlackMisconfigurationFailsTheRender: a Slack setting that cannot work fails "helm
// template" with what to change, not the arbiter at run time.
func TestSlackMisconfigurationFailsTheRender(t *testing.T) {
	for _, tt := range []struct {
		name, values, want string
	}{
		{"an unknown mode (the schema)", `slack: {secret: s, channel: C0A, mode: websocket}`, "/slack/mode"},
		{"a secret without a channel", `slack: {secret: s}`, "slack.channel"},
		{"socket mode with an endpoint", `{slack: {secret: s, channel: C0A}, arbiter: {slackListen: ":8080"}}`, "slack.mode=http"},
		{"an ingress in socket mode", `{slack: {secret: s, channel: C0A}, arbiter: {slackIngress: {enabled: true, host: b.example.com}}}`, "slack.mode=http"},
		{"an ingress without Slack", `{arbiter: {slackIngress: {enabled: true, host: b.example.com}}}`, "slack.secret"},
		{"an ingress without a host", `{slack: {secret: s, channel: C0A, mode: http}, arbiter: {slackIngress: {enabled: true}}}`, "arbiter.slackIngress.host"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := renderFiles(t, tt.values)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("render = %v, want an error naming %s", err, tt.want)
			}
		})
	}
}

// TestSlackLeftOutNeverCrashLoops: Slack is optional. Without it the report Deployment reads no
// Slack variable (report serve then idles healthy, cmd/report's TestServeWithoutSlackIdlesHealthy),
// the arbiter none either, and report.mode cronjob makes no CronJob: every run would fail, with
// nothing to post to.
func TestSlackLeftOutNeverCrashLoops(t *testing.T) {
	objs := render(t, "")
	for _, name := range []string{"Deployment/bursar-report", "Deployment/bursar-arbiter"} {
		d := objs[name].(*appsv1.Deployment)
		for k := range env(d.Spec.Template.Spec.Containers[0]) {
			if strings.HasPrefix(k, "BURSAR_SLACK") {
				t.Errorf("%s sets %s without Slack", name, k)
			}
		}
		if keys := secretKeys(d.Spec.Template.Spec, "slack"); keys != nil {
			t.Errorf("%s mounts Slack keys %v without Slack", name, keys)
		}
	}
	objs = render(t, `report: {mode: cronjob}`)
	for k := range objs {
		if strings.HasPrefix(k, "CronJob/") || strings.HasSuffix(k, "/bursar-report") {
			t.Errorf("report.mode cronjob without Slack rendered %s", k)
		}
	}
	files, err := renderFiles(t, `report: {mode: cronjob}`)
	if err != nil {
		t.Fatal(err)
	}
	if notes := files["bursar/templates/NOTES.txt"]; !strings.Contains(notes, "no report CronJob") {
		t.Errorf("NOTES.txt does not say why there is no CronJob:\n%s", notes)
	}
}
