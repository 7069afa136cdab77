//go:build e2e

package helm_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// mountVolumes writes what the container mounts under root and returns each mount path with
// the directory standing for it.
func mountVolumes(t *testing.T, cs kubernetes.Interface, ns string, vols []corev1.Volume, vms []corev1.VolumeMount, root string) map[string]string {
	t.Helper()
	mounts := map[string]string{}
	ctx, get := context.Background(), metav1.GetOptions{}
	for _, vm := range vms {
		i := slices.IndexFunc(vols, func(v corev1.Volume) bool { return v.Name == vm.Name })
		if i < 0 {
			t.Fatalf("mount %s names no volume", vm.Name)
		}
		dir := filepath.Join(root, vm.MountPath)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		mounts[vm.MountPath] = dir
		var data map[string][]byte
		var items []corev1.KeyToPath
		switch v := vols[i]; {
		case v.EmptyDir != nil:
			continue
		case v.ConfigMap != nil:
			cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, v.ConfigMap.Name, get)
			if err != nil {
				t.Fatalf("volume %s: %v", v.Name, err)
			}
			data, items = map[string][]byte{}, v.ConfigMap.Items
			for k, s := range cm.Data {
				data[k] = []byte(s)
			}
		case v.Secret != nil:
			s, err := cs.CoreV1().Secrets(ns).Get(ctx, v.Secret.SecretName, get)
			if err != nil {
				t.Fatalf("volume %s: %v", v.Name, err)
			}
			data, items = s.Data, v.Secret.Items
		default:
			t.Fatalf("volume %s: this runner mounts ConfigMaps, Secrets and emptyDirs only", v.Name)
		}
		if len(items) == 0 {
			for k := range data {
				items = append(items, corev1.KeyToPath{Key: k, Path: k})
			}
		}
		for _, it := range items {
			b, ok := data[it.Key]
			if !ok {
				t.Fatalf("volume %s: no key %s", vm.Name, it.Key)
			}
			if err := os.WriteFile(filepath.Join(dir, it.Path), b, 0o400); err != nil {
				t.Fatal(err)
			}
		}
	}
	return mounts
}

// rewritePath points a path under a mount (alone, or as a --flag=value's value) at the
// directory standing for the mount.
func rewritePath(v string, mounts map[string]string) string {
	prefix, val := "", v
	if f, rest, ok := strings.Cut(v, "="); ok && strings.HasPrefix(f, "--") {
		prefix, val = f+"=", rest
	}
	paths := slices.Sorted(func(yield func(string) bool) {
		for m := range mounts {
			if !yield(m) {
				return
			}
		}
	})
	for _, m := range slices.Backward(paths) { // the longest first: /etc/bursar/kubeconfigs before /etc/bursar
		if val == m || strings.HasPrefix(val, strings.TrimSuffix(m, "/")+"/") {
			return prefix + mounts[m] + strings.TrimPrefix(val, m)
		}
	}
	return v
}

// listenFlags are the flags that take an address to listen on.
var listenFlags = []string{"--metrics-listen", "--slack-listen", "--console-listen", "--listen"}

// listenHere moves a listen flag's address to a free loopback port, remembering the pod's port.
func listenHere(t *testing.T, arg string, ports map[int]string) string {
	f, addr, ok := strings.Cut(arg, "=")
	if !ok || !slices.Contains(listenFlags, f) || addr == "" {
		return arg
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("%s: %v", arg, err)
	}
	n, _ := strconv.Atoi(port)
	here := "127.0.0.1:" + strconv.Itoa(freePort(t))
	ports[n] = here
	return f + "=" + here
}

func containerPort(c corev1.Container, p intstr.IntOrString) int {
	if p.Type == intstr.Int {
		return p.IntValue()
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort)
		}
	}
	return 0
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// envVars is a container's environment in order, as the kubelet builds it.
type envVars struct {
	names []string
	vals  map[string]string
}

func (v *envVars) set(k, val string) {
	if v.vals == nil {
		v.vals = map[string]string{}
	}
	if _, ok := v.vals[k]; !ok {
		v.names = append(v.names, k)
	}
	v.vals[k] = val
}

var varRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)`)

// expand replaces $(VAR) with a variable defined before, as Kubernetes does for env values and
// args; an unknown reference stays as written.
func (v *envVars) expand(s string) string {
	return varRef.ReplaceAllStringFunc(s, func(ref string) string {
		if val, ok := v.vals[ref[2:len(ref)-1]]; ok {
			return val
		}
		return ref
	})
}

// list is the environment for exec, without the variables set empty.
func (v *envVars) list() []string {
	var out []string
	for _, k := range v.names {
		if v.vals[k] != "" {
			out = append(out, k+"="+v.vals[k])
		}
	}
	return out
}

// podVars resolves ctr's environment: envFrom first, then env in order.
func podVars(t *testing.T, cs kubernetes.Interface, w workload, ctr corev1.Container, mounts map[string]string) *envVars {
	t.Helper()
	ctx, get := context.Background(), metav1.GetOptions{}
	env := &envVars{}
	for _, ef := range ctr.EnvFrom {
		switch {
		case ef.SecretRef != nil:
			s, err := cs.CoreV1().Secrets(w.namespace).Get(ctx, ef.SecretRef.Name, get)
			if err != nil {
				t.Fatalf("envFrom: %v", err)
			}
			for k, b := range s.Data {
				env.set(ef.Prefix+k, string(b))
			}
		case ef.ConfigMapRef != nil:
			cm, err := cs.CoreV1().ConfigMaps(w.namespace).Get(ctx, ef.ConfigMapRef.Name, get)
			if err != nil {
				t.Fatalf("envFrom: %v", err)
			}
			for k, s := range cm.Data {
				env.set(ef.Prefix+k, s)
			}
		}
	}
	for _, e := range ctr.Env {
		env.set(e.Name, fieldValue(t, cs, w, e))
		env.vals[e.Name] = rewritePath(env.expand(env.vals[e.Name]), mounts)
	}
	return env
}

func fieldValue(t *testing.T, cs kubernetes.Interface, w workload, e corev1.EnvVar) string {
	t.Helper()
	ctx, get := context.Background(), metav1.GetOptions{}
	f := e.ValueFrom
	switch {
	case f == nil:
		return e.Value
	case f.FieldRef != nil:
		return map[string]string{"metadata.name": w.name + "-0", "metadata.namespace": w.namespace,
			"spec.nodeName": "gpu-node-1", "status.podIP": "127.0.0.1", "status.hostIP": "127.0.0.1"}[f.FieldRef.FieldPath]
	case f.SecretKeyRef != nil:
		s, err := cs.CoreV1().Secrets(w.namespace).Get(ctx, f.SecretKeyRef.Name, get)
		if err != nil {
			t.Fatalf("env %s: %v", e.Name, err)
		}
		return string(s.Data[f.SecretKeyRef.Key])
	case f.ConfigMapKeyRef != nil:
		cm, err := cs.CoreV1().ConfigMaps(w.namespace).Get(ctx, f.ConfigMapKeyRef.Name, get)
		if err != nil {
			t.Fatalf("env %s: %v", e.Name, err)
		}
		return cm.Data[f.ConfigMapKeyRef.Key]
	}
	t.Fatalf("env %s: this runner resolves fields, Secrets and ConfigMaps only", e.Name)
	return ""
}

// hostEnv is what the programs need from this machine: the path, the home and cache
// directories (libchdb.so is cached there) and the temp directory.
func hostEnv() []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "XDG_CACHE_HOME", "BURSAR_CACHE_DIR", "BURSAR_CHDB_LIB", "LD_LIBRARY_PATH"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
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
