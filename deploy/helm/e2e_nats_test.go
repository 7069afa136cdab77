//go:build e2e

package helm_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
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

	"github.com/bursar-dev/bursar/internal/bus"
)

// natsServer is the NATS of the docs' step 1, in this process, for the credentials the docs'
// Secret holds, with what fills that Secret.
type natsServer struct {
	t       *testing.T // the test that started it, which a Secret it cannot fill fails
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
	n := &natsServer{t: t, seeds: roleKeys(t)}
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
	trusted, err := jwt.DecodeOperatorClaims(encodeJWT(t, oc, op))
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
		if err := res.Store(pub, encodeJWT(t, claims, op)); err != nil {
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

func encodeJWT(t *testing.T, c interface {
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
	n.t.Helper()
	user, pub := newKey(n.t, nkeys.CreateUser)
	uc := jwt.NewUserClaims(pub)
	uc.Name = role
	seed, _ := user.Seed()
	creds, err := jwt.FormatUserConfig(encodeJWT(n.t, uc, n.account), seed)
	if err != nil {
		n.t.Fatalf("creds for %s: %v", key, err)
	}
	return creds
}
