//go:build e2e

package helm_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

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
		return workloads(objs)
	}
	// Issue 31 item 1: Slack as step 3 says, with arbiter.slackListen at its default (Socket Mode).
	t.Run("slack as step 3 says", func(t *testing.T) {
		nats := startNATS(t, true)
		ws := release(t, in, nats)
		slack := fakeSlack(t, in)
		env := podEnv{bin: bin, outside: map[string]string{"BURSAR_NATS": nats.url, "BURSAR_CLICKHOUSE": "",
			"BURSAR_SLACK_API_URL": slack}}
		for _, name := range []string{"bursar-arbiter", "bursar-report"} {
			mustStayUp(t, runPod(t, c.Client(t), find(t, ws, name), env))
		}
	})
	// Issue 31 item 2: Slack left out, which the docs call optional.
	t.Run("slack left out", func(t *testing.T) {
		nats := startNATS(t, true)
		ws := release(t, withoutSlack(in), nats)
		env := podEnv{bin: bin, outside: map[string]string{"BURSAR_NATS": nats.url, "BURSAR_CLICKHOUSE": ""}}
		for _, name := range []string{"bursar-arbiter", "bursar-report"} {
			mustStayUp(t, runPod(t, c.Client(t), find(t, ws, name), env))
		}
	})
	t.Run("report as a cronjob, slack left out", func(t *testing.T) {
		nats := startNATS(t, true)
		ws := release(t, withoutSlack(in), nats, "report-cronjob.yaml")
		env := podEnv{bin: bin, outside: map[string]string{"BURSAR_NATS": nats.url, "BURSAR_CLICKHOUSE": ""}}
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
		nats := startNATS(t, false)
		ws := release(t, withoutSlack(in), nats)
		env := podEnv{bin: bin, outside: map[string]string{"BURSAR_NATS": nats.url, "BURSAR_CLICKHOUSE": ""}}
		o := runPod(t, c.Client(t), find(t, ws, "bursar-arbiter"), env).await(t)
		if o.ready || !strings.Contains(o.why, "--nats-insecure") {
			t.Errorf("arbiter against a NATS without auth: ready %v (%s); want a refusal naming --nats-insecure", o.ready, o.why)
		}
	})
}

// nonName is what a namespace's name cannot hold.
var nonName = regexp.MustCompile(`[^a-z0-9-]+`)

// mustStayUp fails the test unless p becomes ready.
func mustStayUp(t *testing.T, p *pod) {
	t.Helper()
	if o := p.await(t); !o.ready {
		t.Errorf("%s does not come up: %s", p.w, o.why)
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

// natsServer is the NATS of the docs' step 1, in this process: with auth, it trusts an operator
// and holds account BURSAR with JetStream, a user per credentials file the docs' Secret names, as
// the docs' nsc commands make them (the system account aside); without, it takes anyone.
type natsServer struct {
	url     string
	account nkeys.KeyPair // signs the users' JWTs
}

func startNATS(t *testing.T, auth bool) *natsServer {
	t.Helper()
	opts := &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true}
	n := &natsServer{}
	if auth {
		op, opPub := newKey(t, nkeys.CreateOperator)
		sys, sysPub := newKey(t, nkeys.CreateAccount)
		acc, accPub := newKey(t, nkeys.CreateAccount)
		oc := jwt.NewOperatorClaims(opPub)
		oc.SystemAccount = sysPub
		ojwt := encode(t, oc, op)
		trusted, err := jwt.DecodeOperatorClaims(ojwt)
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
		_ = sys
		opts.TrustedOperators, opts.AccountResolver, opts.SystemAccount = []*jwt.OperatorClaims{trusted}, res, sysPub
		n.account = acc
	}
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

// secretData fills the docs' Secrets: a credentials file (KEY.creds) is a user of account BURSAR
// named for the key, with a JWT the account signed (nsc generate creds); without auth, one the
// server never checks. Literals are the docs' own.
func (n *natsServer) secretData(secret, key, literal string) []byte {
	if !strings.HasSuffix(key, ".creds") || n.account == nil {
		return dummyData(secret, key, literal)
	}
	user, err := nkeys.CreateUser()
	if err != nil {
		panic(err)
	}
	pub, _ := user.PublicKey()
	uc := jwt.NewUserClaims(pub)
	uc.Name = strings.TrimSuffix(key, ".creds")
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
