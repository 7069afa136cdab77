//go:build e2e

package helm_test

import (
	"bytes"
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/bursar-dev/bursar/internal/kubeenv"
)

// buildPrograms builds the repository's programs once for the calling test, as the image holds
// them (with NVML), and returns their directory.
func buildPrograms(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-tags", "nvml", "-o", dir+"/", "./cmd/...")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "CGO_CFLAGS=-O2 -g -Wno-deprecated-declarations")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/...: %v\n%s", err, out)
	}
	return dir
}

// podEnv is what runs a pod here: the programs, and the values of the variables that point
// outside the cluster (NATS, ClickHouse, Slack), which the test's own servers stand in for.
// An empty value removes the variable (BURSAR_CLICKHOUSE: the local store instead).
type podEnv struct {
	bin     string
	outside map[string]string
	cluster *kubeenv.Cluster // the API server a pod's ServiceAccount token is for; nil: no token
}

// podRun is a pod's first container run as a process by runPod.
type podRun struct {
	w      workload
	cmd    *exec.Cmd
	out    *syncBuffer
	exited chan struct{}
	err    error          // the process's exit, once exited is closed
	probe  string         // the readiness probe's URL, "" when the container has none
	ports  map[int]string // the container's ports, each with where it listens here
	ctr    corev1.Container
}

// addr is where the container's port name listens here, "" when nothing does.
func (p *podRun) addr(name string) string {
	return p.ports[containerPort(p.ctr, intstr.FromString(name))]
}

// runPod runs w's pod as a kubelet would, from its template as the API server holds it: it
// writes the ConfigMap and Secret keys the container mounts into a directory of its own,
// rewrites the mount paths in the container's args and environment to it, resolves the
// environment (values, $(VAR) references, field, Secret and ConfigMap references), and starts
// the program its command names with its args. Listen addresses get free loopback ports: a
// pod's ports are its own, this machine's are shared. The process stops with the test.
func runPod(t *testing.T, cs kubernetes.Interface, w workload, e podEnv) *podRun {
	t.Helper()
	tmpl := appliedTemplate(t, cs, w)
	ctr := tmpl.Spec.Containers[0]
	root := t.TempDir()
	mounts := mountVolumes(t, cs, w.namespace, tmpl.Spec.Volumes, ctr.VolumeMounts, root)
	env := podVars(t, cs, w, ctr, mounts)
	for k, v := range e.outside {
		env.set(k, v)
	}
	ports := map[int]string{}
	var args []string
	for _, a := range ctr.Args {
		args = append(args, listenHere(t, rewritePath(env.expand(a), mounts), ports))
	}
	wrap := serviceAccount(t, e.cluster, w, tmpl.Spec, env)
	prog := filepath.Base(ctr.Command[0])
	if prog == "arbiter" && !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--console-listen") }) {
		args = append(args, "--console-listen=127.0.0.1:"+strconv.Itoa(freePort(t))) // default 127.0.0.1:9470: the pod's own
	}
	p := &podRun{w: w, out: &syncBuffer{}, exited: make(chan struct{}), ports: ports, ctr: ctr}
	p.cmd = exec.Command(filepath.Join(e.bin, prog), args...)
	if wrap != nil {
		p.cmd = exec.Command(wrap[0], append(append(wrap[1:], filepath.Join(e.bin, prog)), args...)...)
	}
	p.cmd.Dir, p.cmd.Stdout, p.cmd.Stderr = root, p.out, p.out
	p.cmd.Env = append(hostEnv(), env.list()...)
	if pr := ctr.ReadinessProbe; pr != nil && pr.HTTPGet != nil {
		p.probe = "http://" + ports[containerPort(ctr, pr.HTTPGet.Port)] + pr.HTTPGet.Path
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("%s: starting %s: %v", w, prog, err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() { p.stop(t) })
	return p
}

// saPath is where a pod finds its ServiceAccount token, and client-go's in-cluster config
// reads it: a fixed path, which no variable moves.
const saPath = "/var/run/secrets/kubernetes.io/serviceaccount"

// serviceAccount gives the pod its ServiceAccount token as the kubelet would when it mounts one:
// a token from the TokenRequest API, the API server's CA and the namespace in saPath, and the
// KUBERNETES_SERVICE_* variables. The program runs in a mount namespace of its own (unshare)
// where a tmpfs over /run holds saPath, so nothing on this machine changes. It returns the
// command that wraps the program, nil when the pod mounts no token.
func serviceAccount(t *testing.T, c *kubeenv.Cluster, w workload, spec corev1.PodSpec, env *envVars) []string {
	t.Helper()
	if c == nil || (spec.AutomountServiceAccountToken != nil && !*spec.AutomountServiceAccountToken) {
		return nil
	}
	sa := cmp.Or(spec.ServiceAccountName, "default")
	cfg := c.ConfigAs(t, w.namespace, sa)
	dir := t.TempDir()
	for name, b := range map[string][]byte{"token": []byte(cfg.BearerToken), "ca.crt": c.Admin.CAData, "namespace": []byte(w.namespace)} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o444); err != nil {
			t.Fatal(err)
		}
	}
	u, err := url.Parse(c.Admin.Host)
	if err != nil {
		t.Fatal(err)
	}
	env.set("KUBERNETES_SERVICE_HOST", u.Hostname())
	env.set("KUBERNETES_SERVICE_PORT", u.Port())
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Fatalf("%s mounts a ServiceAccount token at %s, which needs unshare (util-linux) to run here: %v", w, saPath, err)
	}
	mount := `mount -t tmpfs tmpfs /run && mkdir -p "$1" && mount --bind "$0" "$1" && shift && exec "$@"`
	args := []string{"unshare", "--mount", "--propagation", "private"}
	if os.Geteuid() != 0 {
		args = append(args, "--map-root-user")
	}
	return append(args, "sh", "-c", mount, dir, strings.Replace(saPath, "/var/run", "/run", 1))
}

// stop sends SIGTERM, as a kubelet does, and kills the process after the grace period.
func (p *podRun) stop(t *testing.T) {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	if t.Failed() {
		t.Logf("%s's output:\n%s", p.w, p.out)
	}
}

// outcome is how a pod fared: ready (its readiness probe answered 200), or completed (a pod
// without a probe exited 0), or neither, with why.
type outcome struct {
	ready, completed bool
	why              string
}

// await waits for p's outcome: its readiness probe answering 200, or its exit.
func (p *podRun) await(t *testing.T) outcome {
	t.Helper()
	deadline := time.After(3 * time.Minute)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-p.exited:
			if p.err == nil && p.probe == "" {
				return outcome{completed: true}
			}
			return outcome{why: fmt.Sprintf("exited (%v): %s", p.err, lastLines(p.out.String(), 1))}
		case <-deadline:
			return outcome{why: "neither ready nor exited in 3m: " + lastLines(p.out.String(), 1)}
		case <-tick.C:
			if p.probe != "" && probeReady(p.probe) {
				return outcome{ready: true}
			}
		}
	}
}

func probeReady(url string) bool {
	c := http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// syncBuffer is a process's output, read while it is written.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
