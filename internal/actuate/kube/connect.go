package kube

import (
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/bursar-dev/bursar/internal/fleet"
)

// Connect builds a client for every kubernetes location of cfg. A location that names neither
// a kubeconfig nor a context is the cluster the arbiter runs in, reached with its pod's
// ServiceAccount (in-cluster config); any other is reached through its kubeconfig (a file, in a
// cluster mounted from a Secret) and context, the file's current context when none is named.
func Connect(cfg *fleet.Config) (*Actuator, error) {
	return connect(cfg, rest.InClusterConfig)
}

// connect is Connect with the in-cluster config injected: it can only be read inside a pod.
func connect(cfg *fleet.Config, inCluster func() (*rest.Config, error)) (*Actuator, error) {
	clients := map[string]kubernetes.Interface{}
	for _, l := range cfg.Locations {
		if l.Actuator.Kind != fleet.KindKubernetes {
			continue
		}
		rc, err := restConfig(l, inCluster)
		if err != nil {
			return nil, err
		}
		c, err := kubernetes.NewForConfig(rc)
		if err != nil {
			return nil, fmt.Errorf("location %s: %w", l.Name, err)
		}
		clients[l.Name] = c
	}
	return New(cfg, clients, Options{}), nil
}

// restConfig is how location l's cluster is reached: in-cluster without kubeconfig and context,
// else the kubeconfig's context.
func restConfig(l fleet.Location, inCluster func() (*rest.Config, error)) (*rest.Config, error) {
	a := l.Actuator
	if a.Kubeconfig == "" && a.Context == "" {
		rc, err := inCluster()
		if err != nil {
			return nil, fmt.Errorf("location %s names no actuator.kubeconfig or actuator.context, so it is the cluster "+
				"the arbiter runs in, but the pod's ServiceAccount cannot be read: %w (outside a pod, set actuator.context)", l.Name, err)
		}
		return rc, nil
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if a.Kubeconfig != "" {
		rules.ExplicitPath = a.Kubeconfig
	}
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{CurrentContext: a.Context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("location %s: kubeconfig %q, context %q: %w (check actuator.kubeconfig, actuator.context and $KUBECONFIG)",
			l.Name, a.Kubeconfig, a.Context, err)
	}
	return rc, nil
}
