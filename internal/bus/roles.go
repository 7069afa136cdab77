package bus

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// Roles: each program connects as one, and the embedded server grants each only what that
// program does, so a leaked report or collector key cannot move the fleet.
const (
	RoleArbiter   = "arbiter"   // everything: it owns the streams, buckets and decisions
	RoleCollector = "collector" // publishes market and telemetry events and jobs' own progress only
	RoleReport    = "report"    // asks the query service and reads streams and buckets
	RoleBudget    = "budget"    // asks the arbiter to change budgets, reads the budget bucket
)

// Roles lists every role the embedded server knows, in the order their keys are written.
var Roles = []string{RoleArbiter, RoleCollector, RoleReport, RoleBudget}

// InboxPrefix is the reply-subject prefix a role's connection uses: each role may subscribe only
// to its own, so one role cannot read the replies meant for another.
func InboxPrefix(role string) string { return "_INBOX_" + role }

const jsAPI = "$JS.API."

// Account is the NATS account role's users live in. The streams and buckets live in the arbiter's
// account alone; every other role has an account of its own that imports, as services, exactly
// the subjects it may ask of the arbiter's (imports). NATS checks a publisher's permissions on a
// message's subject but never on its reply subject, so within one account any role that may
// publish into a stream, or ask JetStream anything, could have the server write its answer into
// any stream or bucket of that account (a request with the reply subject $KV.bursar_leases.arbiter
// stores the answer in the leader lease). Across a service import the server replaces the reply
// subject with a _R_ response subject of its own that routes the answer back into the
// requester's account, where no stream listens.
func Account(role string) string {
	if role == RoleArbiter {
		return "BURSAR"
	}
	return "BURSAR_" + strings.ToUpper(role)
}

// eventSubjects are the subjects the collector publishes events on.
var eventSubjects = []string{"bursar.price.>", "bursar.reclaim.>", "bursar.gpu.>", "bursar.tokens.>", "bursar.job.progress.>"}

// imports lists what role's account imports from the arbiter's, each a service whose answers
// come back on a response subject of the server's: all that role can reach of the streams,
// buckets and the arbiter.
func imports(role string) []string {
	switch role {
	case RoleCollector:
		return append(slices.Clone(eventSubjects), jsAPI+"INFO", streamInfo(Market), streamInfo(Telemetry))
	case RoleReport:
		return append([]string{queryRequests, jsAPI + "INFO"}, reportReads()...)
	case RoleBudget:
		pub := []string{BudgetAdminSubject("*", ">"), JobAdminSubject("*", ">"), jsAPI + "INFO"}
		return append(pub, append(readBucket(BucketBudgets), readBucket(BucketJobs)...)...)
	}
	return nil
}

// queryRequests are the subjects the report role asks the arbiter's report service on.
const queryRequests = "bursar.query.>"

// QueryAnswerTime is the longest a report query may take to answer: the report service serves
// and asks with it, and the report role's import keeps the way back open that long.
const QueryAnswerTime = 5 * time.Minute

// exportResponse is what an export of subject says of its answers. The arbiter answers the
// report queries and the admin requests through Serve, which splits an answer larger than a
// message into chunks, and an import passes a single message back unless its export says the
// answer is a stream (the rest were lost: a long report never came back to the report role).
func exportResponse(subject string) string {
	switch {
	case subject == queryRequests:
		return fmt.Sprintf(", response_type: stream, response_threshold: %q", QueryAnswerTime)
	case strings.HasPrefix(subject, adminPrefix):
		return ", response_type: stream"
	}
	return ""
}

func streamInfo(stream string) string { return jsAPI + "STREAM.INFO." + stream }

// readBucket is what reading one KV bucket takes: its stream's info (which also lists its keys)
// and direct gets of its messages, by key or by sequence. No consumer: a push consumer delivers
// to a subject of the client's choosing in the arbiter's account, a stream or bucket's subject
// among them, so a role that could create one could write anywhere (ReadOnly reads without).
func readBucket(bucket string) []string {
	st := kvStream(bucket)
	return []string{streamInfo(st), jsAPI + "DIRECT.GET." + st, jsAPI + "DIRECT.GET." + st + ".>"}
}

// kvStream is the stream behind a KV bucket.
func kvStream(bucket string) string { return "KV_" + bucket }

// Permissions returns what role may publish and subscribe to. Unknown roles get nil: the
// server then refuses the key, because Users only lists known roles. Beside its account's
// imports a role's permissions name the same subjects, and its own inbox only.
func Permissions(role string) *server.Permissions {
	inbox := []string{InboxPrefix(role) + ".>"}
	switch role {
	case RoleArbiter:
		return &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: []string{">"}},
			Subscribe: &server.SubjectPermission{Allow: []string{">"}},
		}
	case RoleCollector, RoleReport:
		return &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: imports(role)},
			Subscribe: &server.SubjectPermission{Allow: inbox},
		}
	case RoleBudget: // the arbiter CLI's role: budgets and jobs
		return addJobPermissions(BudgetPermissions(RoleBudget), RoleBudget)
	}
	return nil
}

// BudgetAdminSubject is the subject user asks the arbiter to change a budget on
// (bursar.admin.budget.<user>.<op>). The arbiter records user as the actor.
func BudgetAdminSubject(user, op string) string {
	return adminSubject("budget", user, op)
}

// BudgetPermissions are what a NATS user who changes budgets gets: requests on its own
// BudgetAdminSubject only, and reads of the budget bucket. It cannot write the bucket, so the
// arbiter, which takes the actor from the subject, is the only writer. An operator's cluster
// gives each person's user the same, in the budget role's account (docs/security.md).
func BudgetPermissions(user string) *server.Permissions {
	pub := append([]string{BudgetAdminSubject(user, ">"), jsAPI + "INFO"}, readBucket(BucketBudgets)...)
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: pub},
		Subscribe: &server.SubjectPermission{Allow: []string{InboxPrefix(RoleBudget) + ".>"}},
	}
}

// reportReads is what report may ask JetStream: the state of every stream (report streams),
// and reads of the budget, placement and anomaly answer buckets.
func reportReads() []string {
	var pub []string
	for _, s := range []string{Market, Telemetry, Fleet, DLQ} {
		pub = append(pub, streamInfo(s))
	}
	for _, b := range []string{BucketBudgets, BucketPlacement, BucketAnomalyAnswers} {
		pub = append(pub, readBucket(b)...)
	}
	return pub
}

// CredsDir is where the embedded server keeps each role's key, under the NATS store directory:
// <data-dir>/nats/creds.
func CredsDir(storeDir string) string { return filepath.Join(storeDir, "creds") }

// SeedFile is the file holding role's nkey seed in dir; the CLIs read it by default.
func SeedFile(dir, role string) string { return filepath.Join(dir, role+".nk") }

// LoadOrCreateKeys returns each role's public nkey, writing a new seed (mode 0600) for a role
// that has none yet, so the first start creates the keys and later starts reuse them. A key or
// the directory open to others than Bursar's user is refused (checkPrivate).
func LoadOrCreateKeys(dir string) (map[string]string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating NATS credentials dir %s: %w", dir, err)
	}
	if err := checkKeyDir(dir); err != nil {
		return nil, err
	}
	keys := make(map[string]string, len(Roles))
	for _, role := range Roles {
		pub, err := loadOrCreateKey(SeedFile(dir, role))
		if err != nil {
			return nil, err
		}
		keys[role] = pub
	}
	return keys, nil
}

func loadOrCreateKey(path string) (string, error) {
	seed, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return createKey(path)
	}
	if err != nil {
		return "", fmt.Errorf("reading NATS key %s: %w", path, err)
	}
	return publicKey(path, seed)
}

// publicKey parses the user seed read from path and returns its public key.
func publicKey(path string, seed []byte) (string, error) {
	kp, err := nkeys.ParseDecoratedNKey(seed)
	if err != nil {
		return "", fmt.Errorf("NATS key %s is not an nkey seed: %w (delete it to make a new one)", path, err)
	}
	pub, err := kp.PublicKey()
	if err != nil || !nkeys.IsValidPublicUserKey(pub) {
		return "", fmt.Errorf("NATS key %s is not a user seed (delete it to make a new one)", path)
	}
	return pub, nil
}

func createKey(path string) (string, error) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return "", fmt.Errorf("making NATS key %s: %w", path, err)
	}
	seed, err := kp.Seed()
	if err != nil {
		return "", fmt.Errorf("making NATS key %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("writing NATS key %s: %w", path, err)
	}
	if _, err := f.Write(append(seed, '\n')); err != nil {
		f.Close()
		return "", fmt.Errorf("writing NATS key %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("writing NATS key %s: %w", path, err)
	}
	return kp.PublicKey()
}
