package kubeenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// TestVersionAgrees checks that the version Start looks for is the one setup-kube.sh builds and
// tools/kube/go.mod pins: a bump of one alone would skip every e2e test.
func TestVersionAgrees(t *testing.T) {
	script, err := os.ReadFile("../../scripts/setup-kube.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^KUBE_VERSION=(\S+)$`).FindSubmatch(script)
	if m == nil || string(m[1]) != Version {
		t.Errorf("scripts/setup-kube.sh: KUBE_VERSION %q, want %q (kubeenv.Version)", m, Version)
	}
	gomod, err := os.ReadFile("../../tools/kube/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(gomod), "k8s.io/kubernetes "+Version) {
		t.Errorf("tools/kube/go.mod does not require k8s.io/kubernetes %s", Version)
	}
	// The staging modules are published as v0.<minor>.<patch> of the same release.
	staging := "v0" + strings.TrimPrefix(Version, "v1")
	for _, line := range regexp.MustCompile(`(?m)^\s*(k8s\.io/\S+) => (k8s\.io/\S+) (\S+)$`).FindAllStringSubmatch(string(gomod), -1) {
		if line[1] != line[2] || line[3] != staging {
			t.Errorf("tools/kube/go.mod: %q, want %s => %s %s", line[0], line[1], line[1], staging)
		}
	}
}

func TestBinDir(t *testing.T) {
	tests := []struct {
		name                      string
		cacheDir, xdg, home, want string
	}{
		{name: "bursar cache dir wins", cacheDir: "/c", xdg: "/x", home: "/h", want: "/c/kube/" + Version},
		{name: "xdg cache", xdg: "/x", home: "/h", want: "/x/bursar/kube/" + Version},
		{name: "home", home: "/h", want: "/h/.cache/bursar/kube/" + Version},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("BURSAR_CACHE_DIR", tt.cacheDir)
			t.Setenv("XDG_CACHE_HOME", tt.xdg)
			t.Setenv("HOME", tt.home)
			if got := BinDir(); got != tt.want {
				t.Errorf("BinDir() = %q, want %q", got, tt.want)
			}
		})
	}
}

// stopped records how Start ended a test without ending this one.
type stopped struct {
	testing.TB
	skipped, failed string
}

func (s *stopped) Helper() {}
func (s *stopped) Skip(args ...any) {
	s.skipped = fmt.Sprint(args...)
	runtime.Goexit()
}
func (s *stopped) Fatal(args ...any) {
	s.failed = fmt.Sprint(args...)
	runtime.Goexit()
}

// runStart runs Start against an empty cache and returns how it stopped the test.
func runStart(t *testing.T) *stopped {
	t.Setenv("BURSAR_CACHE_DIR", t.TempDir())
	s := &stopped{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Start(s)
	}()
	<-done
	return s
}

func TestStartWithoutBinaries(t *testing.T) {
	t.Setenv("BURSAR_REQUIRE_KUBE", "")
	s := runStart(t)
	if s.failed != "" || !strings.Contains(s.skipped, "make e2e") || !strings.Contains(s.skipped, "etcd") {
		t.Errorf("with no binaries: skipped %q, failed %q; want a skip naming etcd and make e2e", s.skipped, s.failed)
	}
	t.Setenv("BURSAR_REQUIRE_KUBE", "1")
	s = runStart(t)
	if s.skipped != "" || !strings.Contains(s.failed, "make e2e") {
		t.Errorf("with BURSAR_REQUIRE_KUBE=1: skipped %q, failed %q; want a failure naming make e2e", s.skipped, s.failed)
	}
}

func TestToUnstructured(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	u, err := toUnstructured(pod)
	if err != nil {
		t.Fatal(err)
	}
	if u.GetAPIVersion() != "v1" || u.GetKind() != "Pod" || u.GetName() != "p" {
		t.Errorf("a typed Pod became %s %s %s, want v1 Pod p", u.GetAPIVersion(), u.GetKind(), u.GetName())
	}
	if _, ok := u.Object["status"]; ok {
		t.Error("a typed object's status was kept; apply would claim the server's fields")
	}
	if _, err := toUnstructured(&unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x"}}}); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("an unstructured object with no kind: got %v, want an error naming it", err)
	}
	type notKube struct{ corev1.Pod }
	if _, err := toUnstructured(&notKube{}); err == nil || !strings.Contains(err.Error(), "notKube") {
		t.Errorf("a type outside the scheme: got %v, want an error naming it", err)
	}
}

func TestNodeStatus(t *testing.T) {
	for _, gpus := range []int{0, 8} {
		s := nodeStatus(gpus)
		got := s.Allocatable[GPUResource]
		if got.Value() != int64(gpus) {
			t.Errorf("gpus %d: allocatable %s", gpus, got.String())
		}
		if pods := s.Allocatable[corev1.ResourcePods]; pods.Value() == 0 {
			t.Errorf("gpus %d: no pods allocatable; the scheduler would bind nothing", gpus)
		}
		if len(s.Conditions) != 1 || s.Conditions[0].Type != corev1.NodeReady || s.Conditions[0].Status != corev1.ConditionTrue {
			t.Errorf("gpus %d: conditions %v, want Ready", gpus, s.Conditions)
		}
	}
}

// TestProcess runs a real child: its log is kept, an early exit is reported at stop, and one
// that keeps running is ended by SIGTERM.
func TestProcess(t *testing.T) {
	dir := t.TempDir()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	quick, err := startProcess(dir, "quick", sh, "-c", "echo one; echo two; echo listen tcp: address already in use >&2; exit 3")
	if err != nil {
		t.Fatal(err)
	}
	<-quick.done
	if got := quick.tail(2); got != "two\nlisten tcp: address already in use" {
		t.Errorf("tail(2) = %q", got)
	}
	if !quick.bindFailed() {
		t.Error("bindFailed() = false for a process that could not bind")
	}
	if err := quick.stop(); err == nil || !strings.Contains(err.Error(), "quick exited") {
		t.Errorf("stop() of an exited process = %v, want it reported", err)
	}
	long, err := startProcess(dir, "long", sh, "-c", "exec sleep 600")
	if err != nil {
		t.Fatal(err)
	}
	if gone, _ := long.exited(); gone {
		t.Fatal("sleep exited at once")
	}
	if err := long.stop(); err != nil {
		t.Errorf("stop() of a running process = %v", err)
	}
	if gone, _ := long.exited(); !gone || long.bindFailed() {
		t.Errorf("after stop: exited %v, bindFailed %v; want exited, not a bind failure", gone, long.bindFailed())
	}
	if _, err := os.Stat(filepath.Join(dir, "long.log")); err != nil {
		t.Error(err)
	}
}

func TestUntainted(t *testing.T) {
	gpu := corev1.Taint{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule}
	got := untainted([]corev1.Taint{
		{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule},
		gpu,
		{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute},
	})
	if len(got) != 1 || got[0] != gpu {
		t.Errorf("untainted kept %v, want only the caller's %v", got, gpu)
	}
}

// TestWriteKubeconfig reads the file back as kubectl and client-go would.
func TestWriteKubeconfig(t *testing.T) {
	want := &rest.Config{
		Host:            "https://127.0.0.1:6443",
		BearerToken:     "tok",
		TLSClientConfig: rest.TLSClientConfig{CAData: []byte("ca"), CertData: []byte("crt"), KeyData: []byte("key")},
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := writeKubeconfig(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Host != want.Host || got.BearerToken != want.BearerToken || string(got.CAData) != "ca" ||
		string(got.CertData) != "crt" || string(got.KeyData) != "key" {
		t.Errorf("read back %+v, want %+v", got, want)
	}
	if err := writeKubeconfig(filepath.Join(path, "not-a-dir", "kubeconfig"), want); err == nil || !strings.Contains(err.Error(), "not-a-dir") {
		t.Errorf("writing under a file: got %v, want an error naming the path", err)
	}
}
