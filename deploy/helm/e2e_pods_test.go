//go:build e2e

package helm_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/bursar-dev/bursar/internal/kubeenv"
	"github.com/bursar-dev/bursar/internal/slack/slacktest"
)

// TestE2EPodsRun installs the release as docs/deploy.md says, with the choices it offers, and
// runs its pods here from the templates the API server holds (runPod): each must come up ready,
// or, run once, succeed. NATS is a real server with accounts and users, as the docs' step 1
// makes it; ClickHouse is the local store; Slack is the test's fake.
func TestE2EPodsRun(t *testing.T) {
	c := kubeenv.Start(t)
	bin := buildPrograms(t)
	in := readDocs(t)
	release := func(t *testing.T, in docsInstall, nats *natsServer, values ...string) []workload {
		t.Helper()
		in.namespace += "-" + strings.Trim(nonName.ReplaceAllString(strings.ToLower(t.Name()[strings.Index(t.Name(), "/")+1:]), "-"), "-")
		objs := renderDocs(t, in, values...)
		applyDocs(t, c, in, objs, nats.secretData)
		fleetWorkloads(t, c.Client(t), objs)
		return workloads(objs)
	}
	// Issue 31 item 1: Slack as step 3 says, with arbiter.slackListen at its default (Socket Mode).
	t.Run("slack as step 3 says", func(t *testing.T) {
		nats := docsNATS(t, in, true)
		ws := release(t, in, nats)
		slack, api := fakeSlack(t, in)
		slack.QueueInteractive([]byte(`{"type":"block_actions","user":{"id":"U0E2E"},"actions":[]}`))
		env := podEnv{bin: bin, cluster: c, outside: map[string]string{"BURSAR_NATS": nats.url, "BURSAR_CLICKHOUSE": "",
			"BURSAR_SLACK_API_URL": api}}
		for _, name := range []string{"bursar-arbiter", "bursar-report"} {
			mustStayUp(t, runPod(t, c.Client(t), findWorkload(t, ws, name), env))
		}
		// The arbiter's Socket Mode connection reached Slack: it acknowledged the click queued
		// for it.
		for end := time.Now().Add(30 * time.Second); len(slack.Acks()) == 0; time.Sleep(200 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatal("the arbiter's Socket Mode connection never reached Slack (no interaction acknowledged in 30s)")
			}
		}
	})
	// Issue 31 item 1, the other choice: Slack posts approval clicks to the arbiter over HTTP.
	// The endpoint is up and checks the signature: an unsigned click is refused (401).
	t.Run("slack over HTTP", func(t *testing.T) {
		hin, file := slackHTTP(t, in)
		nats := docsNATS(t, hin, true)
		ws := release(t, hin, nats, file)
		env := podEnv{bin: bin, cluster: c, outside: map[string]string{"BURSAR_NATS": nats.url, "BURSAR_CLICKHOUSE": "",
			"BURSAR_SLACK_API_URL": slackAPI(t, hin)}}
		p := runPod(t, c.Client(t), findWorkload(t, ws, "bursar-arbiter"), env)
		mustStayUp(t, p)
		addr := p.addr("slack")
		if addr == "" {
			t.Fatalf("the arbiter has no port named slack listening (ports %v)", p.ports)
		}
		resp, err := http.Post("http://"+addr+"/slack/interactions", "application/x-www-form-urlencoded", strings.NewReader("payload=%7B%7D"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("an unsigned click: %s, want 401", resp.Status)
		}
	})
	// Issue 31 item 2: Slack left out, which the docs call optional. The report idles healthy
	// and says why, as a warning that names Slack.
	t.Run("slack left out", func(t *testing.T) {
		nats := docsNATS(t, in, true)
		ws := release(t, withoutSlack(in), nats)
		env := podEnv{bin: bin, cluster: c, outside: map[string]string{"BURSAR_NATS": nats.url, "BURSAR_CLICKHOUSE": ""}}
		mustStayUp(t, runPod(t, c.Client(t), findWorkload(t, ws, "bursar-arbiter"), env))
		report := runPod(t, c.Client(t), findWorkload(t, ws, "bursar-report"), env)
		mustStayUp(t, report)
		if !slices.ContainsFunc(strings.Split(report.out.String(), "\n"), func(l string) bool {
			return strings.Contains(l, `"level":"WARN"`) && strings.Contains(l, "Slack")
		}) {
			t.Errorf("the report without Slack does not say why it posts nothing (no warning naming Slack):\n%s", report.out)
		}
	})
	t.Run("report as a cronjob, slack left out", func(t *testing.T) {
		nats := docsNATS(t, in, true)
		ws := release(t, withoutSlack(in), nats, "report-cronjob.yaml")
		env := podEnv{bin: bin, cluster: c, outside: map[string]string{"BURSAR_NATS": nats.url, "BURSAR_CLICKHOUSE": ""}}
		mustStayUp(t, runPod(t, c.Client(t), findWorkload(t, ws, "bursar-arbiter"), env))
		i := workloadIndex(ws, "bursar-report")
		if i < 0 {
			t.Log("no report CronJob without Slack")
			return
		}
		if o := runPod(t, c.Client(t), ws[i], env).await(t); !o.completed {
			t.Errorf("%s's run: %s", ws[i], o.why)
		}
	})
	// Issue 31 item 3: a NATS server that does not require authentication is refused, naming
	// --nats-insecure: nats-server accepts any credentials when it has no auth configured
	// (nats-server#4324), so the per-role permissions would silently not hold.
	t.Run("nats without auth", func(t *testing.T) {
		nats := docsNATS(t, in, false)
		ws := release(t, withCreds(withoutSlack(in)), nats, "nats-creds.yaml")
		env := podEnv{bin: bin, cluster: c, outside: map[string]string{"BURSAR_NATS": nats.url, "BURSAR_CLICKHOUSE": ""}}
		o := runPod(t, c.Client(t), findWorkload(t, ws, "bursar-arbiter"), env).await(t)
		if o.ready || !strings.Contains(o.why, "--nats-insecure") {
			t.Errorf("arbiter against a NATS without auth: ready %v (%s); want a refusal naming --nats-insecure", o.ready, o.why)
		}
	})
}

// withCreds is the install with credentials files in the NATS Secret, as the docs say for a
// NATS on operator JWTs: ROLE.creds instead of each ROLE.nk.
func withCreds(in docsInstall) docsInstall {
	out := in
	out.secrets = slices.Clone(in.secrets)
	for i, s := range out.secrets {
		if !hasKeySuffix(s, ".nk") {
			continue
		}
		keys := map[string]string{}
		for k, v := range s.keys {
			keys[strings.TrimSuffix(k, ".nk")+".creds"] = v
		}
		out.secrets[i].keys = keys
	}
	return out
}

// nonName is what a namespace's name cannot hold.
var nonName = regexp.MustCompile(`[^a-z0-9-]+`)

// fleetWorkloads makes the Deployments the release's Roles let the arbiter scale: the user's
// workloads, which exist before Bursar is installed (with no replicas: nothing runs pods here).
func fleetWorkloads(t *testing.T, cs kubernetes.Interface, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() != "Role" {
			continue
		}
		var role rbacv1.Role
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &role); err != nil {
			t.Fatal(err)
		}
		for _, r := range role.Rules {
			if !slices.Contains(r.Resources, "deployments/scale") {
				continue
			}
			for _, name := range r.ResourceNames {
				createDeployment(t, cs, o.GetNamespace(), name)
			}
		}
	}
}

func createDeployment(t *testing.T, cs kubernetes.Interface, ns, name string) {
	t.Helper()
	lbls := map[string]string{"app": name}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: appsv1.DeploymentSpec{
		Replicas: new(int32(0)), Selector: &metav1.LabelSelector{MatchLabels: lbls},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: lbls},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "llm", Image: "registry.invalid/llm"}}}}}}
	if _, err := cs.AppsV1().Deployments(ns).Create(context.Background(), d, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// mustStayUp stops the test unless p becomes ready: the pods started after it need it (the
// report reads its history through the arbiter).
func mustStayUp(t *testing.T, p *podRun) {
	t.Helper()
	if o := p.await(t); !o.ready {
		t.Fatalf("%s does not come up: %s", p.w, o.why)
	}
}

func workloadIndex(ws []workload, name string) int {
	for i, w := range ws {
		if w.name == name {
			return i
		}
	}
	return -1
}

func findWorkload(t *testing.T, ws []workload, name string) workload {
	t.Helper()
	i := workloadIndex(ws, name)
	if i < 0 {
		t.Fatalf("the release makes no %s (it makes %v)", name, ws)
	}
	return ws[i]
}

// fakeSlack starts the test's Slack for the docs' Slack Secret: the bot token and, for Socket
// Mode, the app token are the docs' literals. Slack's auth.test (report serve checks its token
// with it at start) is answered here; slacktest answers the rest.
func fakeSlack(t *testing.T, in docsInstall) (*slacktest.Server, string) {
	t.Helper()
	var keys map[string]string
	for _, s := range in.secrets {
		if strings.Contains(s.name, "slack") {
			keys = s.keys
		}
	}
	s := slacktest.New(t, keys["bot-token"])
	s.AppToken = keys["app-token"]
	up, err := url.Parse(strings.TrimSuffix(s.URL, "/api/"))
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(up)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/auth.test") {
			proxy.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if !strings.Contains(string(body), url.QueryEscape(s.Token)) && !strings.Contains(r.Header.Get("Authorization"), s.Token) {
			fmt.Fprint(w, `{"ok":false,"error":"invalid_auth"}`)
			return
		}
		fmt.Fprint(w, `{"ok":true,"team":"E2E","user":"bursar","team_id":"T0E2E","user_id":"U0BURSAR","bot_id":"B0BURSAR"}`)
	}))
	t.Cleanup(front.Close)
	return s, front.URL + "/api/"
}

// slackAPI is fakeSlack's Web API address.
func slackAPI(t *testing.T, in docsInstall) string {
	_, api := fakeSlack(t, in)
	return api
}
