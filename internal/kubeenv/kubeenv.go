// Package kubeenv runs a real Kubernetes control plane for end-to-end tests: etcd,
// kube-apiserver and kube-scheduler, built from their upstream sources by scripts/setup-kube.sh
// and cached outside the repository as libchdb.so is. There is no kubelet and no
// controller-manager: nodes are API objects (as kwok makes them), the scheduler binds pods to
// them and nothing runs the pods.
//
// What the missing controller-manager would do does not happen: a Deployment, StatefulSet or
// Job gets no pods (a test sees its spec change, and creates the pods it wants itself), nothing
// is garbage-collected, and a deleted namespace stays Terminating. Namespace creates the
// "default" ServiceAccount and AddNode lifts the not-ready taint in its place.
//
// Only tests import it (files with the e2e build tag); the package carries no tag itself so that
// `make test` vets it.
package kubeenv

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/bursar-dev/bursar/internal/cachedir"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Version is the Kubernetes release scripts/setup-kube.sh builds (tools/kube/go.mod pins it).
const Version = "v1.37.2"

// SetupCommand is what a person runs to build the control plane.
const SetupCommand = "make e2e (or scripts/setup-kube.sh)"

// binaries are the programs Start runs, all in BinDir.
var binaries = []string{"etcd", "kube-apiserver", "kube-scheduler"}

// BinDir says where scripts/setup-kube.sh puts the binaries:
// ${BURSAR_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/bursar}/kube/<Version>/. It does not check
// that they are there.
func BinDir() string {
	return filepath.Join(cachedir.Root(), "kube", Version)
}

// Cluster is a running control plane. Admin is a config for a user in system:masters.
type Cluster struct {
	Admin *rest.Config

	once sync.Once
	cl   *clients
	err  error
}

// clients are what Apply calls the API server with, made once per cluster.
type clients struct {
	typed   kubernetes.Interface
	dynamic dynamic.Interface
	mapper  meta.ResettableRESTMapper // discovery-backed, reset when a kind is not found
}

// Start starts etcd, kube-apiserver and kube-scheduler from the binaries scripts/setup-kube.sh
// caches (${BURSAR_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/bursar}/kube/<version>/). When they
// are missing it skips the test naming `make e2e`, unless BURSAR_REQUIRE_KUBE=1 (then it fails).
// Everything is stopped by t.Cleanup.
func Start(t testing.TB) *Cluster {
	t.Helper()
	bins := BinDir()
	for _, b := range binaries {
		if _, err := os.Stat(filepath.Join(bins, b)); err != nil {
			msg := "kubeenv: " + b + " (of the Kubernetes " + Version + " control plane) is not built (" + err.Error() + "): run " + SetupCommand
			if os.Getenv("BURSAR_REQUIRE_KUBE") == "1" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	dir := t.TempDir()
	ids, err := writeIdentities(dir)
	if err != nil {
		t.Fatalf("kubeenv: %v", err)
	}
	ctx := context.Background()
	etcd, etcdURL, err := startEtcd(ctx, bins, dir)
	if err != nil {
		failStart(t, err, etcd)
	}
	stopAll(t, etcd)
	api, err := startAPIServer(ctx, bins, dir, etcdURL, ids)
	if err != nil {
		failStart(t, err, api.proc) // etcd's log comes from its cleanup
	}
	stopAll(t, api.proc)
	sched, err := startScheduler(bins, dir, api.admin, ids.scheduler)
	if err != nil {
		t.Fatalf("kubeenv: %v", err)
	}
	stopAll(t, sched)
	return &Cluster{Admin: api.admin}
}

// failStart fails the test on a control plane that did not come up, with its logs.
func failStart(t testing.TB, err error, procs ...*process) {
	t.Helper()
	for _, p := range procs {
		if p != nil {
			t.Logf("last lines of %s's log:\n%s", p.name, p.tail(logTailLines))
		}
	}
	t.Fatalf("kubeenv: %v", err)
}

// Client returns a clientset for the admin.
func (c *Cluster) Client(t testing.TB) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(c.Admin)
	if err != nil {
		t.Fatalf("kubeenv: admin clientset: %v", err)
	}
	return cs
}

// clients makes, once, the clients Apply uses.
func (c *Cluster) clients() (*clients, error) {
	c.once.Do(func() {
		disc, err := discovery.NewDiscoveryClientForConfig(c.Admin)
		if err != nil {
			c.err = err
			return
		}
		cl := &clients{mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))}
		if cl.dynamic, err = dynamic.NewForConfig(c.Admin); err != nil {
			c.err = err
			return
		}
		if cl.typed, err = kubernetes.NewForConfig(c.Admin); err != nil {
			c.err = err
			return
		}
		c.cl = cl
	})
	return c.cl, c.err
}
