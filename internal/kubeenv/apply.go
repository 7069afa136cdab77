package kubeenv

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
)

// FieldManager is the server-side apply manager of the objects Apply writes.
const FieldManager = "bursar-e2e"

// A kind the API server has just learnt (a CRD applied a moment before) shows in discovery
// within a few seconds; Apply looks it up again meanwhile.
const (
	discoveryRetries = 20
	discoveryPause   = 500 * time.Millisecond
)

// Apply applies objects by server-side apply (field manager "bursar-e2e", force,
// fieldValidation=Strict) with the admin identity; an object the server refuses fails the test
// naming it. It returns once what applied RoleBindings and ClusterRoleBindings grant is in force.
func (c *Cluster) Apply(t testing.TB, objs ...runtime.Object) {
	t.Helper()
	if err := c.TryApply(context.Background(), objs...); err != nil {
		t.Fatalf("kubeenv: %v", err)
	}
}

// TryApply is Apply returning the error, which names the object, instead of failing the test.
// It stops at the first object refused. When the objects include RoleBindings or
// ClusterRoleBindings, it returns once the API server authorizes what they grant (see
// waitGranted), so that a test can act as their subjects at once.
func (c *Cluster) TryApply(ctx context.Context, objs ...runtime.Object) error {
	cl, err := c.clients()
	if err != nil {
		return fmt.Errorf("kubeenv clients: %w", err)
	}
	var bindings []binding
	for _, obj := range objs {
		u, err := toUnstructured(obj)
		if err != nil {
			return err
		}
		if err := cl.apply(ctx, u); err != nil {
			return err
		}
		b, ok, err := asBinding(u)
		if err != nil {
			return err
		}
		if ok {
			bindings = append(bindings, b)
		}
	}
	for _, b := range bindings {
		if err := waitGranted(ctx, cl.typed, b); err != nil {
			return err
		}
	}
	return nil
}

func (cl *clients) apply(ctx context.Context, u *unstructured.Unstructured) error {
	gvk := u.GroupVersionKind()
	what := fmt.Sprintf("%s %s", gvk.Kind, u.GetName())
	mapping, err := restMapping(ctx, cl.mapper, gvk)
	if err != nil {
		return fmt.Errorf("applying %s: %w", what, err)
	}
	var res patcher = cl.dynamic.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := u.GetNamespace()
		if ns == "" {
			ns = "default" // as kubectl does
		}
		what = fmt.Sprintf("%s %s/%s", gvk.Kind, ns, u.GetName())
		res = cl.dynamic.Resource(mapping.Resource).Namespace(ns)
	}
	body, err := u.MarshalJSON()
	if err != nil {
		return fmt.Errorf("applying %s: %w", what, err)
	}
	force := true
	opts := metav1.PatchOptions{FieldManager: FieldManager, Force: &force, FieldValidation: "Strict"}
	if _, err := res.Patch(ctx, u.GetName(), types.ApplyPatchType, body, opts); err != nil {
		return fmt.Errorf("applying %s: %w", what, err)
	}
	return nil
}

// patcher is the one method of a dynamic resource client that apply calls.
type patcher interface {
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, options metav1.PatchOptions, subresources ...string) (*unstructured.Unstructured, error)
}

// toUnstructured turns a typed object of client-go's scheme (its kind found from its Go type)
// or an unstructured one (its kind as set) into the unstructured form apply sends. A typed
// object's status is dropped: it is the server's to write, and apply would only claim it.
func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("applying %q: an unstructured object needs apiVersion and kind", u.GetName())
		}
		return u, nil
	}
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil {
		return nil, fmt.Errorf("applying a %T: %w (pass an *unstructured.Unstructured for kinds client-go does not know)", obj, err)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("applying a %T: %w", obj, err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvks[0])
	delete(u.Object, "status")
	return u, nil
}

// restMapping finds the resource that serves gvk, looking discovery up again for a kind not
// (yet) served.
func restMapping(ctx context.Context, mapper meta.ResettableRESTMapper, gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	for i := 0; ; i++ {
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err == nil || !meta.IsNoMatchError(err) || i == discoveryRetries {
			return m, err
		}
		mapper.Reset()
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (while waiting for %s in discovery)", ctx.Err(), gvk)
		case <-time.After(discoveryPause):
		}
	}
}
