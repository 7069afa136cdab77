package kubeenv

import (
	"context"
	"fmt"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
)

// The RBAC authorizer reads roles and bindings from its own informer cache, so a binding just
// written grants nothing for a moment: a test that applies a Role and RoleBinding and then acts
// as the subject would get a 403 now and then. Apply waits, within rbacWithin, until the API
// server answers every rule of each applied binding's role as allowed for each subject.
const (
	rbacWithin = 30 * time.Second
	rbacPause  = 100 * time.Millisecond
)

// binding is an applied RoleBinding or ClusterRoleBinding (namespace "" for the latter).
type binding struct {
	namespace string
	roleRef   rbacv1.RoleRef
	subjects  []rbacv1.Subject
}

// asBinding returns the binding an applied object is, if it is one.
func asBinding(u *unstructured.Unstructured) (binding, bool, error) {
	gvk := u.GroupVersionKind()
	if gvk.Group != rbacv1.GroupName || (gvk.Kind != "RoleBinding" && gvk.Kind != "ClusterRoleBinding") {
		return binding{}, false, nil
	}
	var rb rbacv1.RoleBinding // a ClusterRoleBinding has the same fields
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &rb); err != nil {
		return binding{}, false, fmt.Errorf("reading %s %s: %w", gvk.Kind, u.GetName(), err)
	}
	b := binding{roleRef: rb.RoleRef, subjects: rb.Subjects}
	if gvk.Kind == "RoleBinding" {
		b.namespace = u.GetNamespace()
		if b.namespace == "" {
			b.namespace = "default"
		}
	}
	return b, true, nil
}

// waitGranted waits until each subject of b is allowed each rule of b's role. A role not
// (yet) there is not waited for: a binding may be written before its role.
func waitGranted(ctx context.Context, cs kubernetes.Interface, b binding) error {
	rules, err := roleRules(ctx, cs, b)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, rbacWithin)
	defer cancel()
	for _, s := range b.subjects {
		for _, r := range rules {
			review := accessReview(s, r, b.namespace)
			if err := waitAllowed(ctx, cs, review); err != nil {
				return fmt.Errorf("%s %s bound to %s %s: %w", s.Kind, s.Name, b.roleRef.Kind, b.roleRef.Name, err)
			}
		}
	}
	return nil
}

func roleRules(ctx context.Context, cs kubernetes.Interface, b binding) ([]rbacv1.PolicyRule, error) {
	if b.roleRef.Kind == "Role" {
		role, err := cs.RbacV1().Roles(b.namespace).Get(ctx, b.roleRef.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return role.Rules, nil
	}
	role, err := cs.RbacV1().ClusterRoles().Get(ctx, b.roleRef.Name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return role.Rules, nil
}

// accessReview asks whether subject may do the first of what rule grants, in namespace.
func accessReview(subject rbacv1.Subject, rule rbacv1.PolicyRule, namespace string) *authorizationv1.SubjectAccessReview {
	spec := authorizationv1.SubjectAccessReviewSpec{}
	switch subject.Kind {
	case rbacv1.ServiceAccountKind:
		ns := subject.Namespace
		spec.User = "system:serviceaccount:" + ns + ":" + subject.Name
		spec.Groups = []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}
	case rbacv1.UserKind:
		spec.User = subject.Name
	default:
		spec.Groups = []string{subject.Name}
	}
	verb := first(rule.Verbs)
	if len(rule.NonResourceURLs) > 0 {
		spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: rule.NonResourceURLs[0], Verb: verb}
		return &authorizationv1.SubjectAccessReview{Spec: spec}
	}
	resource, sub, _ := strings.Cut(first(rule.Resources), "/")
	spec.ResourceAttributes = &authorizationv1.ResourceAttributes{
		Namespace: namespace, Verb: verb, Group: first(rule.APIGroups),
		Resource: resource, Subresource: sub, Name: first(rule.ResourceNames),
	}
	return &authorizationv1.SubjectAccessReview{Spec: spec}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// waitAllowed asks the API server until it allows review or ctx ends.
func waitAllowed(ctx context.Context, cs kubernetes.Interface, review *authorizationv1.SubjectAccessReview) error {
	for {
		got, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err == nil && got.Status.Allowed {
			return nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = fmt.Errorf("denied: %s", got.Status.Reason)
			}
			return fmt.Errorf("not allowed %s after %s: %w", describe(review), rbacWithin, err)
		case <-time.After(rbacPause):
		}
	}
}

func describe(r *authorizationv1.SubjectAccessReview) string {
	if a := r.Spec.NonResourceAttributes; a != nil {
		return a.Verb + " " + a.Path
	}
	a := r.Spec.ResourceAttributes
	return fmt.Sprintf("%s %s %s/%s in %q", a.Verb, a.Group, a.Resource, a.Subresource, a.Namespace)
}
