// Package kubetest is a Kubernetes cluster for tests of the kube actuator and of what drives it:
// client-go's fake clientset, with the scale subresource of Deployments served the way the API
// server serves it, batch/v1 Jobs (for jobs' suspend), and helpers that play the parts of the ReplicaSet controller, the scheduler
// and the kubelet (a pod bound to a node and ready, or left Unschedulable).
package kubetest

import (
	"errors"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

var deployments = appsv1.SchemeGroupVersion.WithResource("deployments")

// Cluster is the fake clientset: reads of a Deployment's scale come from the Deployment, writes
// set its spec.replicas, and a write with a stale resourceVersion is a conflict.
type Cluster struct {
	*fake.Clientset
	mu        sync.Mutex
	conflicts int
	updates   int
}

// New returns a cluster holding objs.
func New(objs ...runtime.Object) *Cluster {
	c := &Cluster{Clientset: fake.NewClientset(objs...)}
	c.PrependReactor("get", "deployments", c.getScale)
	c.PrependReactor("update", "deployments", c.updateScale)
	return c
}

// FailNextUpdates makes the next n scale updates conflict, as if someone else changed the object.
func (c *Cluster) FailNextUpdates(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.conflicts = n
}

// Updates counts the scale updates that changed a Deployment.
func (c *Cluster) Updates() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.updates
}

func (c *Cluster) getScale(a k8stesting.Action) (bool, runtime.Object, error) {
	if a.GetSubresource() != "scale" {
		return false, nil, nil
	}
	d, err := c.Tracker().Get(deployments, a.GetNamespace(), a.(k8stesting.GetAction).GetName())
	if err != nil {
		return true, nil, err
	}
	dep := d.(*appsv1.Deployment)
	return true, &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: dep.Name, Namespace: dep.Namespace,
		ResourceVersion: dep.ResourceVersion}, Spec: autoscalingv1.ScaleSpec{Replicas: *dep.Spec.Replicas}}, nil
}

func (c *Cluster) updateScale(a k8stesting.Action) (bool, runtime.Object, error) {
	if a.GetSubresource() != "scale" {
		return false, nil, nil
	}
	s := a.(k8stesting.UpdateAction).GetObject().(*autoscalingv1.Scale)
	d, err := c.Tracker().Get(deployments, s.Namespace, s.Name)
	if err != nil {
		return true, nil, err
	}
	dep := d.(*appsv1.Deployment).DeepCopy()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conflicts > 0 || s.ResourceVersion != dep.ResourceVersion {
		c.conflicts--
		return true, nil, apierrors.NewConflict(schema.GroupResource{Group: "apps", Resource: "deployments"}, s.Name,
			errors.New("the object has been modified"))
	}
	c.updates++
	dep.Spec.Replicas = &s.Spec.Replicas
	dep.ResourceVersion += "1"
	if err := c.Tracker().Update(deployments, dep, dep.Namespace); err != nil {
		return true, nil, err
	}
	return true, s, nil
}

// Deployment is a Deployment whose pods carry the label app=name.
func Deployment(namespace, name string, replicas, ready int32) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, ResourceVersion: "1"},
		Spec:   appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}},
		Status: appsv1.DeploymentStatus{ReadyReplicas: ready}}
}

// Job is a batch/v1 Job, suspended or not, whose pods carry the label app=name and of which
// ready pods are ready. The fake clientset serves Jobs as the API server does (get, update), so
// only the controllers' part needs playing.
func Job(namespace, name string, suspend bool, ready int32) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, ResourceVersion: "1"},
		Spec:   batchv1.JobSpec{Suspend: &suspend, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}},
		Status: batchv1.JobStatus{Ready: &ready}}
}

// Node is a cluster node backed by the cloud instance providerID names.
func Node(name, providerID string, annotations map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations},
		Spec: corev1.NodeSpec{ProviderID: providerID}}
}

// PodState is how far a pod got: bound to Node and Ready or still starting, or (no Node) left
// Unschedulable by the scheduler since UnschedulableSince; Terminating pods are being deleted.
type PodState struct {
	Node               string
	Ready              bool
	UnschedulableSince time.Time
	Terminating        bool
}

// Pod is a pod of the Deployment app (by its label) in the given state.
func Pod(namespace, name, app string, st PodState) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{NodeName: st.Node}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	switch {
	case st.Node == "":
		p.Status.Phase = corev1.PodPending
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: corev1.PodReasonUnschedulable, Message: "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
			LastTransitionTime: metav1.NewTime(st.UnschedulableSince)}}
	case st.Ready:
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	default:
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
			{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady"}}
	}
	if st.Terminating {
		p.DeletionTimestamp = &metav1.Time{} // when does not matter: that it is set does
		p.Finalizers = []string{"test/keep"}
	}
	return p
}

// RunReady plays the controllers for one replica of Deployment app: a node backed by
// providerID joins (unless it has already), a ready pod of app is bound to it, and the
// Deployment's ready count goes up by one.
func (c *Cluster) RunReady(namespace, app, pod, node, providerID string) error {
	if _, err := c.Tracker().Get(corev1.SchemeGroupVersion.WithResource("nodes"), "", node); apierrors.IsNotFound(err) {
		if err := c.Tracker().Add(Node(node, providerID, nil)); err != nil {
			return err
		}
	}
	if err := c.Tracker().Add(Pod(namespace, pod, app, PodState{Node: node, Ready: true})); err != nil {
		return err
	}
	d, err := c.Tracker().Get(deployments, namespace, app)
	if err != nil {
		return err
	}
	dep := d.(*appsv1.Deployment).DeepCopy()
	dep.Status.ReadyReplicas++
	return c.Tracker().Update(deployments, dep, namespace)
}
