//go:build e2e

package helm_test

// What runPod gives a pod's process: its mounts as files, its args and environment pointed at
// them, and its listen addresses on free loopback ports.

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

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
