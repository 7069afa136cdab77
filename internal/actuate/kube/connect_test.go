package kube

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/bursar-dev/bursar/internal/fleet"
)

// apiServer answers /version like a kube-apiserver, over TLS (client-go sends a kubeconfig's
// credentials over nothing else), and records the bearer token of each call.
func apiServer(t *testing.T) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var tokens []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		tokens = append(tokens, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"major":"1","minor":"34","gitVersion":"v1.34.0"}`)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), tokens...) }
}

const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: other
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: bursar
  user: {token: other-cluster-token}
contexts:
- name: other
  context: {cluster: other, user: bursar}
current-context: other
`

// TestConnectUsesInClusterConfigForItsOwnCluster: a location naming no kubeconfig or context is
// reached with the pod's ServiceAccount; one naming a kubeconfig (a mounted Secret) through it,
// with or without a context.
func TestConnectUsesInClusterConfigForItsOwnCluster(t *testing.T) {
	home, homeTokens := apiServer(t)
	other, otherTokens := apiServer(t)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, fmt.Appendf(nil, kubeconfig, other.URL), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none")) // no default file to fall back on
	cfg := &fleet.Config{Locations: []fleet.Location{
		{Name: "home", Actuator: fleet.Actuator{Kind: fleet.KindKubernetes}},
		{Name: "other", Actuator: fleet.Actuator{Kind: fleet.KindKubernetes, Kubeconfig: path, Context: "other"}},
		{Name: "other-current", Actuator: fleet.Actuator{Kind: fleet.KindKubernetes, Kubeconfig: path}},
	}}
	inCluster := func() (*rest.Config, error) {
		return &rest.Config{Host: home.URL, BearerToken: "service-account-token",
			TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, nil
	}
	a, err := connect(cfg, inCluster)
	if err != nil {
		t.Fatal(err)
	}
	for _, loc := range []string{"home", "other", "other-current"} {
		if _, err := a.clients[loc].(*kubernetes.Clientset).Discovery().ServerVersion(); err != nil {
			t.Fatalf("location %s: %v", loc, err)
		}
	}
	if got := homeTokens(); len(got) != 1 || got[0] != "service-account-token" {
		t.Errorf("the home cluster saw tokens %q, want the ServiceAccount's once", got)
	}
	if got := otherTokens(); len(got) != 2 || got[0] != "other-cluster-token" || got[1] != "other-cluster-token" {
		t.Errorf("the other cluster saw tokens %q, want the kubeconfig's twice", got)
	}
}

func TestConnectOutsideAPodSaysWhatToSet(t *testing.T) {
	cfg := &fleet.Config{Locations: []fleet.Location{{Name: "home", Actuator: fleet.Actuator{Kind: fleet.KindKubernetes}}}}
	_, err := connect(cfg, func() (*rest.Config, error) { return nil, rest.ErrNotInCluster })
	if !errors.Is(err, rest.ErrNotInCluster) || !strings.Contains(err.Error(), "location home") ||
		!strings.Contains(err.Error(), "set actuator.context") {
		t.Fatalf("connect outside a pod = %v, want the location, the cause and what to set", err)
	}
	_, err = connect(&fleet.Config{Locations: []fleet.Location{{Name: "far",
		Actuator: fleet.Actuator{Kind: fleet.KindKubernetes, Kubeconfig: filepath.Join(t.TempDir(), "missing")}}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "location far") || !strings.Contains(err.Error(), "actuator.kubeconfig") {
		t.Fatalf("connect with a missing kubeconfig = %v, want the location and the field", err)
	}
}
