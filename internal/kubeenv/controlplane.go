package kubeenv

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
)

// Deadlines for the control plane to come up on a busy machine. They bound the waits; no test
// asserts on how long a start took.
const (
	etcdReadyWithin      = time.Minute
	apiServerReadyWithin = 3 * time.Minute
	startAttempts        = 3 // a free port taken between picking and binding it is retried
)

// serviceCIDR is the cluster IP range Services get addresses from; nothing routes it.
const serviceCIDR = "10.96.0.0/16"

// identities are the tokens of the static token file: the admin and the scheduler's own user,
// which the API server's bootstrap RBAC binds to system:kube-scheduler.
type identities struct {
	admin, scheduler string
}

// writeIdentities writes the static token file and the service-account signing key pair into
// dir.
func writeIdentities(dir string) (identities, error) {
	ids := identities{admin: randomToken(), scheduler: randomToken()}
	tokens := fmt.Sprintf("%s,admin,admin,\"system:masters\"\n%s,system:kube-scheduler,kube-scheduler\n",
		ids.admin, ids.scheduler)
	if err := os.WriteFile(filepath.Join(dir, "tokens.csv"), []byte(tokens), 0o600); err != nil {
		return ids, fmt.Errorf("writing the token file: %w", err)
	}
	// ES256 keys are quick to make; the API server signs and verifies service-account tokens
	// with them as with RSA.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return ids, fmt.Errorf("making the service-account key: %w", err)
	}
	priv, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return ids, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return ids, err
	}
	if err := writePEM(filepath.Join(dir, "sa.key"), "EC PRIVATE KEY", priv); err != nil {
		return ids, err
	}
	return ids, writePEM(filepath.Join(dir, "sa.pub"), "PUBLIC KEY", pub)
}

func writePEM(path, kind string, der []byte) error {
	b := pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b) // crypto/rand.Read does not fail
	return hex.EncodeToString(b)
}

// startEtcd starts a one-member etcd on free loopback ports and returns it with its client URL.
func startEtcd(ctx context.Context, bins, dir string) (*process, string, error) {
	for attempt := 1; ; attempt++ {
		client, err1 := freePort()
		peer, err2 := freePort()
		if err1 != nil || err2 != nil {
			return nil, "", fmt.Errorf("etcd ports: %v %v", err1, err2)
		}
		clientURL := "http://127.0.0.1:" + strconv.Itoa(client)
		peerURL := "http://127.0.0.1:" + strconv.Itoa(peer)
		p, err := startProcess(dir, "etcd", filepath.Join(bins, "etcd"),
			"--name=e2e",
			"--data-dir="+filepath.Join(dir, fmt.Sprintf("etcd-data-%d", attempt)),
			"--listen-client-urls="+clientURL, "--advertise-client-urls="+clientURL,
			"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
			"--initial-cluster=e2e="+peerURL,
			// A test's data need not survive a crash of the machine.
			"--unsafe-no-fsync",
		)
		if err != nil {
			return nil, "", err
		}
		ready, cancel := context.WithTimeout(ctx, etcdReadyWithin)
		err = p.waitReady(ready, httpOK(http.DefaultClient, clientURL+"/health", ""))
		cancel()
		if err == nil {
			return p, clientURL, nil
		}
		_ = p.stop()
		if !p.bindFailed() || attempt == startAttempts {
			return p, "", err
		}
	}
}

// apiServer is a running kube-apiserver: its process and a config for the admin.
type apiServer struct {
	proc  *process
	admin *rest.Config
}

// startAPIServer starts kube-apiserver on a free secure port of 127.0.0.1, with serving certs
// of its own making in dir/certs, RBAC, the static tokens and the service-account keys of
// writeIdentities, and waits for /readyz.
func startAPIServer(ctx context.Context, bins, dir, etcdURL string, ids identities) (*apiServer, error) {
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return &apiServer{}, err
		}
		certs := filepath.Join(dir, fmt.Sprintf("certs-%d", attempt))
		p, err := startProcess(dir, "kube-apiserver", filepath.Join(bins, "kube-apiserver"),
			"--etcd-servers="+etcdURL,
			"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
			"--secure-port="+strconv.Itoa(port),
			"--cert-dir="+certs,
			"--authorization-mode=RBAC",
			"--token-auth-file="+filepath.Join(dir, "tokens.csv"),
			"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
			"--service-account-key-file="+filepath.Join(dir, "sa.pub"),
			"--service-account-signing-key-file="+filepath.Join(dir, "sa.key"),
			"--service-cluster-ip-range="+serviceCIDR,
			// The "kubernetes" Service's endpoints would name the advertised address, which
			// may not be loopback; nothing in the tests reaches the API server through it.
			"--endpoint-reconciler-type=none",
			"--profiling=false",
		)
		if err != nil {
			return &apiServer{}, err
		}
		host := "https://127.0.0.1:" + strconv.Itoa(port)
		ready, cancel := context.WithTimeout(ctx, apiServerReadyWithin)
		admin, err := waitAPIServer(ready, p, host, certs, ids.admin)
		cancel()
		if err == nil {
			return &apiServer{proc: p, admin: admin}, nil
		}
		_ = p.stop()
		if !p.bindFailed() || attempt == startAttempts {
			return &apiServer{proc: p}, err
		}
	}
}

// waitAPIServer waits for the serving certificate the API server writes (it signs it with a CA
// of its own and writes both to apiserver.crt), then for /readyz, and returns the admin config
// that trusts that CA.
func waitAPIServer(ctx context.Context, p *process, host, certs, token string) (*rest.Config, error) {
	var ca []byte
	err := p.waitReady(ctx, func(context.Context) error {
		b, err := os.ReadFile(filepath.Join(certs, "apiserver.crt"))
		if err != nil {
			return err
		}
		// The file is the serving certificate then its CA's; fewer than two is a file still
		// being written.
		if chain, err := certutil.ParseCertsPEM(b); err != nil || len(chain) < 2 {
			return fmt.Errorf("apiserver.crt is not complete yet (%d certificates, %v)", len(chain), err)
		}
		ca = b
		return nil
	})
	if err != nil {
		return nil, err
	}
	cfg := &rest.Config{
		Host:            host,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: ca},
		// The default client-side limit (5/s) only slows the tests down.
		QPS: 100, Burst: 200,
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("admin client: %w", err)
	}
	if err := p.waitReady(ctx, httpOK(hc, host+"/readyz", token)); err != nil {
		return nil, err
	}
	return cfg, nil
}

// httpOK is a readiness check: GET url answers 200.
func httpOK(hc *http.Client, url, token string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return nil
	}
}

// startScheduler starts kube-scheduler as its own user (system:kube-scheduler), without leader
// election or a serving port: one scheduler per test cluster, which the tests watch through the
// pods it binds.
func startScheduler(bins, dir string, api *rest.Config, token string) (*process, error) {
	cfg := rest.CopyConfig(api)
	cfg.BearerToken = token
	kubeconfig := filepath.Join(dir, "scheduler.kubeconfig")
	if err := writeKubeconfig(kubeconfig, cfg); err != nil {
		return nil, err
	}
	return startProcess(dir, "kube-scheduler", filepath.Join(bins, "kube-scheduler"),
		"--kubeconfig="+kubeconfig,
		"--leader-elect=false",
		"--secure-port=0",
	)
}
