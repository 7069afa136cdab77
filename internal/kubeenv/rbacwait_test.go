package kubeenv

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestAsBinding(t *testing.T) {
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "r"}
	sa := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "bursar", Namespace: "ops"}
	tests := []struct {
		name   string
		obj    runtime.Object
		wantOK bool
		wantNS string
	}{
		{name: "role binding", obj: &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ops"}, RoleRef: ref, Subjects: []rbacv1.Subject{sa}}, wantOK: true, wantNS: "ops"},
		{name: "role binding in no namespace is in default", obj: &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"}, RoleRef: ref, Subjects: []rbacv1.Subject{sa}}, wantOK: true, wantNS: "default"},
		{name: "cluster role binding", obj: &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"}, RoleRef: ref, Subjects: []rbacv1.Subject{sa}}, wantOK: true},
		{name: "a role is no binding", obj: &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ops"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := toUnstructured(tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			b, ok, err := asBinding(u)
			if err != nil || ok != tt.wantOK {
				t.Fatalf("asBinding = %v, %v, %v; want ok %v", b, ok, err, tt.wantOK)
			}
			if ok && (b.namespace != tt.wantNS || b.roleRef != ref || len(b.subjects) != 1 || b.subjects[0] != sa) {
				t.Errorf("asBinding = %+v, want namespace %q, %v, [%v]", b, tt.wantNS, ref, sa)
			}
		})
	}
}

func TestAccessReview(t *testing.T) {
	tests := []struct {
		name      string
		subject   rbacv1.Subject
		rule      rbacv1.PolicyRule
		wantUser  string
		wantGroup string
		want      string
	}{
		{
			name:     "service account, subresource",
			subject:  rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "bursar", Namespace: "ops"},
			rule:     rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"deployments/scale"}, Verbs: []string{"patch", "get"}},
			wantUser: "system:serviceaccount:ops:bursar", wantGroup: "system:serviceaccounts:ops",
			want: `patch apps deployments/scale in "ops"`,
		},
		{
			name:     "user, named resource",
			subject:  rbacv1.Subject{Kind: rbacv1.UserKind, Name: "alice"},
			rule:     rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"cfg"}, Verbs: []string{"get"}},
			wantUser: "alice",
			want:     `get  configmaps/ in "ops"`,
		},
		{
			name:      "group, non-resource URL",
			subject:   rbacv1.Subject{Kind: rbacv1.GroupKind, Name: "ops"},
			rule:      rbacv1.PolicyRule{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}},
			wantGroup: "ops",
			want:      "get /metrics",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := accessReview(tt.subject, tt.rule, "ops")
			if r.Spec.User != tt.wantUser || (tt.wantGroup != "" && !slices.Contains(r.Spec.Groups, tt.wantGroup)) {
				t.Errorf("user %q groups %v, want %q with %q", r.Spec.User, r.Spec.Groups, tt.wantUser, tt.wantGroup)
			}
			if got := describe(r); got != tt.want {
				t.Errorf("asks %q, want %q", got, tt.want)
			}
			if a := r.Spec.ResourceAttributes; a != nil && len(tt.rule.ResourceNames) > 0 && a.Name != tt.rule.ResourceNames[0] {
				t.Errorf("name %q, want the rule's %q", a.Name, tt.rule.ResourceNames[0])
			}
		})
	}
}
