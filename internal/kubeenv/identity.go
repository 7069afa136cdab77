package kubeenv

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// tokenLifetime is how long a ConfigAs token lasts: longer than any test.
const tokenLifetime = 3600

// Namespace creates the namespace and its "default" ServiceAccount, which a controller-manager
// would create and none runs here. Either may exist already ("default", "kube-system").
func (c *Cluster) Namespace(t testing.TB, name string) {
	t.Helper()
	ctx := context.Background()
	cs := c.Client(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("kubeenv: creating namespace %s: %v", name, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: name}}
	if _, err := cs.CoreV1().ServiceAccounts(name).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("kubeenv: creating service account %s/default: %v", name, err)
	}
}

// ConfigAs returns a config authenticating as the ServiceAccount namespace/sa with a token from
// the TokenRequest API, as a pod's projected token would.
func (c *Cluster) ConfigAs(t testing.TB, namespace, sa string) *rest.Config {
	t.Helper()
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: new(int64(tokenLifetime)),
	}}
	tok, err := c.Client(t).CoreV1().ServiceAccounts(namespace).CreateToken(context.Background(), sa, req, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("kubeenv: a token for service account %s/%s: %v", namespace, sa, err)
	}
	cfg := rest.AnonymousClientConfig(c.Admin)
	cfg.BearerToken = tok.Status.Token
	return cfg
}

// Kubeconfig writes a kubeconfig file for cfg into t.TempDir() and returns its path.
func (c *Cluster) Kubeconfig(t testing.TB, cfg *rest.Config) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := writeKubeconfig(path, cfg); err != nil {
		t.Fatalf("kubeenv: %v", err)
	}
	return path
}

// writeKubeconfig writes cfg's server, CA and credentials (token or client certificate) as a
// kubeconfig file with one context.
func writeKubeconfig(path string, cfg *rest.Config) error {
	const name = "e2e"
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthorityData: cfg.CAData,
	}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{
		Token:                 cfg.BearerToken,
		ClientCertificateData: cfg.CertData,
		ClientKeyData:         cfg.KeyData,
	}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}
