package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bursar-dev/bursar/internal/actuate"
)

// DefaultNodeWait is how long an Unschedulable pod may wait for a node (a cluster autoscaler or
// Karpenter bringing one) before it counts as pending for want of capacity: long enough for a
// GPU node to boot and join, short of the arbiter's launch timeouts.
const DefaultNodeWait = 5 * time.Minute

// gceInstanceID is the annotation GKE puts on a node with its VM's numeric id, which is what the
// GCE metadata server (and so a GCP reclaim notice) names the instance by.
const gceInstanceID = "container.googleapis.com/instance_id"

// placement is where one group's pods run: the nodes and cloud instances of the ready ones and of
// those still starting, and how many got no node for want of capacity.
type placement struct {
	ready, starting []string
	noCapacity      int
}

// nodeIDs caches, for one Observe, each node's names: its own and its cloud instance ids.
type nodeIDs map[string][]string

// place lists the pods of the object (by its selector) and says where they run. A pod the
// scheduler marked Unschedulable for longer than the node wait counts as having no capacity;
// one bound to a node that is not ready yet is starting, so a node that never comes is given up
// by the arbiter's launch timeout.
func (a *Actuator) place(ctx context.Context, tg target, sel *metav1.LabelSelector, nodes nodeIDs) (placement, error) {
	var p placement
	if sel == nil {
		return p, fmt.Errorf("%s has no pod selector: set spec.selector", tg)
	}
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return p, fmt.Errorf("pod selector of %s: %w", tg, err)
	}
	pods, err := tg.client.CoreV1().Pods(tg.namespace).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return p, fmt.Errorf("listing pods of %s: %w", tg, err)
	}
	now := a.opts.Now()
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		if pod.Spec.NodeName == "" {
			if since, ok := unschedulableSince(pod); ok && now.Sub(since) >= a.opts.NodeWait {
				p.noCapacity++
			}
			continue
		}
		ids, err := nodes.of(ctx, tg, pod.Spec.NodeName)
		if err != nil {
			return p, err
		}
		if podReady(pod) {
			p.ready = append(p.ready, ids...)
		} else {
			p.starting = append(p.starting, ids...)
		}
	}
	return placement{ready: uniq(p.ready), starting: uniq(p.starting), noCapacity: p.noCapacity}, nil
}

// of returns the node's names, reading the node once per Observe. A node gone already is known
// by its name only.
func (n nodeIDs) of(ctx context.Context, tg target, name string) ([]string, error) {
	if ids, ok := n[name]; ok {
		return ids, nil
	}
	node, err := tg.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		n[name] = []string{name}
	case err != nil:
		return nil, fmt.Errorf("reading node %s of %s: %w", name, tg, err)
	default:
		n[name] = nodeNames(node)
	}
	return n[name], nil
}

// nodeNames is the node's name and the ids its cloud knows it by: the instance in its providerID
// and, on GKE, the VM's numeric id.
func nodeNames(node *corev1.Node) []string {
	out := []string{node.Name}
	if id := InstanceID(node.Spec.ProviderID); id != "" {
		out = append(out, id)
	}
	if id := node.Annotations[gceInstanceID]; id != "" {
		out = append(out, id)
	}
	return uniq(out)
}

// InstanceID is the cloud instance a node's spec.providerID names, as that cloud's metadata
// server and reclaim notices name it: "i-0abc" from aws:///us-east-1a/i-0abc, the VM name from
// gce://project/zone/name and from an Azure VM's resource id, "set_3" from an Azure scale set
// VM's (.../virtualMachineScaleSets/set/virtualMachines/3). It is "" when there is none.
func InstanceID(providerID string) string {
	_, path, ok := strings.Cut(providerID, "://")
	if !ok {
		return ""
	}
	parts := strings.FieldsFunc(path, func(r rune) bool { return r == '/' })
	if len(parts) == 0 {
		return ""
	}
	last := parts[len(parts)-1]
	if n := len(parts); n >= 4 && strings.EqualFold(parts[n-4], "virtualMachineScaleSets") &&
		strings.EqualFold(parts[n-2], "virtualMachines") {
		return parts[n-3] + "_" + last
	}
	return last
}

// unschedulableSince is when the scheduler found no node for the pod, if that is its state.
func unschedulableSince(pod *corev1.Pod) (time.Time, bool) {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return c.LastTransitionTime.Time, true
		}
	}
	return time.Time{}, false
}

func podReady(pod *corev1.Pod) bool {
	return slices.ContainsFunc(pod.Status.Conditions, func(c corev1.PodCondition) bool {
		return c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue
	})
}

// fill sets o's instances and pending replicas from where its pods run.
// The lists are never nil: an empty one says nothing runs there, not that nothing is known.
func (p placement) fill(o *actuate.Observed) {
	o.Instances, o.Starting = append([]string{}, p.ready...), append([]string{}, p.starting...)
	if p.noCapacity > 0 {
		o.Pending, o.Reason = p.noCapacity, actuate.ReasonNoCapacity
	}
}

func uniq(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}
