//go:build e2e

package helm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/strvals"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/bursar-dev/bursar/internal/bus"
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
		slack := fakeSlack(t, in)
		env := podEnv{bin: bin, cluster: c, outside: map[string]string{"BURSAR_NATS": nats.url, "BURSAR_CLICKHOUSE": "",
			"BURSAR_SLACK_API_URL": slack}}
		for _, name := range []string{"bursar-arbiter", "bursar-report"} {
			mustStayUp(t, runPod(t, c.Client(t), find(t, ws, name), env))
		}
	})
	// Issue 31 item 2: Slack left out, which the docs call optional.
	t.Run("slack left out", func(t *testing.T) {
		nats := docsNATS(t, in, true)
		ws := release(t, withoutSlack(in), nats)
		env := podEnv{bin: bin, cluster: c, outside: map[string]string{"BURSAR_NATS": nats.url, "BURSAR_CLICKHOUSE": ""}}
		for _, name := range []string{"bursar-arbiter", "bursar-report"} {
			mustStayUp(t, runPod(t, c.Client(t), find(t, ws, name), env))
		}
	})
	t.Run("report as a cronjob, slack left out", func(t *testing.T) {
		nats := docsNATS(t, in, true)
		ws := release(t, withoutSlack(in), nats, "report-cronjob.yaml")
		env := podEnv{bin: bin, cluster: c, outside: map[string]string{"BURSAR_NATS": nats.url, "BURSAR_CLICKHOUSE": ""}}
		mustStayUp(t, runPod(t, c.Client(t), find(t, ws, "bursar-arbiter"), env))
		i := indexOf(ws, "bursar-report")
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
		ws := release(t, withoutSlack(in), nats)
		env := podEnv{bin: bin, cluster: c, outside: map[string]string{"BURSAR_NATS": nats.url, "BURSAR_CLICKHOUSE": ""}}
		o := runPod(t, c.Client(t), find(t, ws, "bursar-arbiter"), env).await(t)
		if o.ready || !strings.Contains(o.why, "--nats-insecure") {
			t.Errorf("arbiter against a NATS without auth: ready %v (%s); want a refusal naming --nats-insecure", o.ready, o.why)
		}
	})
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
func mustStayUp(t *testing.T, p *pod) {
	t.Helper()
	if o := p.await(t); !o.ready {
		t.Fatalf("%s does not come up: %s", p.w, o.why)
	}
}

func indexOf(ws []workload, name string) int {
	for i, w := range ws {
		if w.name == name {
			return i
		}
	}
	return -1
}

func find(t *testing.T, ws []workload, name string) workload {
	t.Helper()
	i := indexOf(ws, name)
	if i < 0 {
		t.Fatalf("the release makes no %s (it makes %v)", name, ws)
	}
	return ws[i]
}

// natsServer is the NATS of the docs' step 1, in this process, for the credentials the docs'
// Secret holds, with what fills that Secret.
type natsServer struct {
	url     string
	seeds   map[string][]byte // ROLE.nk: each role's nkey seed
	account nkeys.KeyPair     // ROLE.creds: signs the users' JWTs
}

// docsNATS starts the NATS server of the docs' step 1 (auth false: one that requires no
// authentication at all). The keys of the docs' NATS Secret say how the programs authenticate:
// ROLE.nk seeds against a server configured as the NATS chart configures it from the step's
// values (natsConfig), each role's public nkey in its environment as the step's --set gives
// them; ROLE.creds files against a server that trusts an operator and holds account BURSAR
// with JetStream, its users' JWTs signed by the account, as the docs' nsc commands make them.
func docsNATS(t *testing.T, in docsInstall, auth bool) *natsServer {
	t.Helper()
	n := &natsServer{seeds: roleKeys(t)}
	acc, accPub := newKey(t, nkeys.CreateAccount)
	n.account = acc
	dir := t.TempDir()
	opts := &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: dir}
	switch {
	case !auth:
	case slices.ContainsFunc(in.secrets, func(s docsSecret) bool { return hasKeySuffix(s, ".nk") }):
		conf, err := natsConfig(in, dir)
		if err != nil {
			t.Fatalf("the docs' NATS step: %v", err)
		}
		if opts, err = server.ProcessConfigFile(conf); err != nil {
			t.Fatalf("the docs' NATS step: the server refuses its configuration: %v", err)
		}
	default:
		trustOperator(t, opts, acc, accPub)
	}
	opts.NoLog, opts.NoSigs = true, true
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS did not start")
	}
	n.url = s.ClientURL()
	return n
}

// roleKeys makes each role's nkey and puts its public key in the environment, as the docs'
// step 1 gives them to the server (BURSAR_ROLE_NKEY, which accounts.conf reads); it returns
// the seeds.
func roleKeys(t *testing.T) map[string][]byte {
	t.Helper()
	seeds := map[string][]byte{}
	for _, role := range bus.Roles {
		kp, pub := newKey(t, nkeys.CreateUser)
		seeds[role], _ = kp.Seed()
		t.Setenv("BURSAR_"+strings.ToUpper(role)+"_NKEY", pub)
	}
	return seeds
}

// TestE2ENATSStepRequiresAuth (issue 31 item 3): the NATS server of the docs' step 1,
// configured as the NATS chart configures it from the step's values, refuses a client without
// credentials. One that takes it takes any credentials too (nats-server#4324), and every
// component's permissions go unenforced.
func TestE2ENATSStepRequiresAuth(t *testing.T) {
	in := readDocs(t)
	roleKeys(t)
	conf, err := natsConfig(in, t.TempDir())
	if err != nil {
		t.Fatalf("the docs' NATS step: %v", err)
	}
	opts, err := server.ProcessConfigFile(conf)
	if err != nil {
		t.Fatalf("the docs' NATS step: the server refuses its configuration: %v", err)
	}
	opts.NoLog, opts.NoSigs = true, true
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS did not start")
	}
	if nc, err := nats.Connect(s.ClientURL()); err == nil {
		nc.Close()
		t.Fatalf("a NATS server configured as step 1 says (values files %v, --set %v) takes a client with no credentials", in.natsFiles, in.natsSets)
	}
}

func hasKeySuffix(s docsSecret, suffix string) bool {
	for k := range s.keys {
		if strings.HasSuffix(k, suffix) {
			return true
		}
	}
	return false
}

// trustOperator makes opts a server in operator mode: an operator, the system account, and
// account BURSAR (accPub) with JetStream, resolved from memory.
func trustOperator(t *testing.T, opts *server.Options, acc nkeys.KeyPair, accPub string) {
	t.Helper()
	op, opPub := newKey(t, nkeys.CreateOperator)
	_, sysPub := newKey(t, nkeys.CreateAccount)
	oc := jwt.NewOperatorClaims(opPub)
	oc.SystemAccount = sysPub
	trusted, err := jwt.DecodeOperatorClaims(encode(t, oc, op))
	if err != nil {
		t.Fatal(err)
	}
	ac := jwt.NewAccountClaims(accPub)
	ac.Name = "BURSAR"
	ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
	sc := jwt.NewAccountClaims(sysPub)
	sc.Name = "SYS"
	res := &server.MemAccResolver{}
	for pub, claims := range map[string]*jwt.AccountClaims{accPub: ac, sysPub: sc} {
		if err := res.Store(pub, encode(t, claims, op)); err != nil {
			t.Fatal(err)
		}
	}
	opts.TrustedOperators, opts.AccountResolver, opts.SystemAccount = []*jwt.OperatorClaims{trusted}, res, sysPub
}

// natsConfig writes the nats.conf the official NATS chart renders from the docs' step-1 values
// (its -f files, from this checkout, then its --set): JetStream when config.jetstream.enabled,
// an include for each config.merge key ending in $include (the chart's convention), the other
// config.merge keys as settings, and configMap.merge.data's files beside it. It returns the
// file's path.
func natsConfig(in docsInstall, dir string) (string, error) {
	vals := map[string]any{}
	for _, f := range in.natsFiles {
		v, err := common.ReadValuesFile(filepath.Join("../..", f))
		if err != nil {
			return "", fmt.Errorf("-f %s: %w", f, err)
		}
		vals = util.MergeTables(v.AsMap(), vals)
	}
	for _, s := range in.natsSets {
		if err := strvals.ParseInto(s, vals); err != nil {
			return "", fmt.Errorf("--set %s: %w", s, err)
		}
	}
	v := common.Values(vals)
	conf := "host: 127.0.0.1\nport: -1\n"
	if on, _ := v.PathValue("config.jetstream.enabled"); on == true {
		conf += "jetstream {store_dir: " + strconv.Quote(filepath.Join(dir, "js")) + "}\n"
	}
	merge, _ := v.Table("config.merge")
	for _, k := range slices.Sorted(maps.Keys(merge)) {
		if strings.HasSuffix(k, "$include") {
			conf += fmt.Sprintf("include %s;\n", strconv.Quote(fmt.Sprint(merge[k])))
			continue
		}
		b, err := json.Marshal(merge[k])
		if err != nil {
			return "", fmt.Errorf("config.merge.%s: %w", k, err)
		}
		conf += fmt.Sprintf("%s: %s\n", k, b)
	}
	data, _ := v.Table("configMap.merge.data")
	for name, body := range data {
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(name)), []byte(fmt.Sprint(body)), 0o600); err != nil {
			return "", err
		}
	}
	path := filepath.Join(dir, "nats.conf")
	return path, os.WriteFile(path, []byte(conf), 0o600)
}

func newKey(t *testing.T, create func() (nkeys.KeyPair, error)) (nkeys.KeyPair, string) {
	t.Helper()
	kp, err := create()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	return kp, pub
}

func encode(t *testing.T, c interface {
	Encode(nkeys.KeyPair) (string, error)
}, kp nkeys.KeyPair) string {
	t.Helper()
	s, err := c.Encode(kp)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// secretData fills the docs' Secrets: ROLE.nk with the role's seed; ROLE.creds with a user of
// account BURSAR named for the role, its JWT signed by the account (nsc generate creds).
// Literals are the docs' own.
func (n *natsServer) secretData(secret, key, literal string) []byte {
	role, ext, _ := strings.Cut(key, ".")
	switch {
	case ext == "nk" && n.seeds[role] != nil:
		return n.seeds[role]
	case ext != "creds":
		return dummyData(secret, key, literal)
	}
	user, err := nkeys.CreateUser()
	if err != nil {
		panic(err)
	}
	pub, _ := user.PublicKey()
	uc := jwt.NewUserClaims(pub)
	uc.Name = role
	ujwt, err := uc.Encode(n.account)
	if err != nil {
		panic(err)
	}
	seed, _ := user.Seed()
	creds, err := jwt.FormatUserConfig(ujwt, seed)
	if err != nil {
		panic(fmt.Sprintf("creds for %s: %v", key, err))
	}
	return creds
}

// fakeSlack starts the test's Slack for the docs' Slack Secret: the bot token and, for Socket
// Mode, the app token are the docs' literals. Slack's auth.test (report serve checks its token
// with it at start) is answered here; slacktest answers the rest.
func fakeSlack(t *testing.T, in docsInstall) string {
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
	return front.URL + "/api/"
}
