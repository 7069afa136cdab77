package kube

import (
	"cmp"
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

// placement is where one group's pods run: the instances of the ready ones and of those still
// starting, one per pod, oldest pod first (as the sim lists its instances, so the arbiter can pair
// them with its replicas), and how many got no node for want of capacity.
type placement struct {
	ready, starting []string
	noCapacity      int
}

// nodeIDs caches, for one Observe, the instance each node runs on.
type nodeIDs map[string]string

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
	list, err := tg.client.CoreV1().Pods(tg.namespace).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return p, fmt.Errorf("listing pods of %s: %w", tg, err)
	}
	pods := list.Items
	slices.SortFunc(pods, func(x, y corev1.Pod) int {
		return cmp.Or(x.CreationTimestamp.Compare(y.CreationTimestamp.Time), cmp.Compare(x.Name, y.Name))
	})
	now := a.opts.Now()
	for i := range pods {
		pod := &pods[i]
		if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		if pod.Spec.NodeName == "" {
			if since, ok := unschedulableSince(pod); ok && now.Sub(since) >= tg.nodeWait {
				p.noCapacity++
			}
			continue
		}
		id, err := nodes.of(ctx, tg, pod.Spec.NodeName)
		if err != nil {
			return p, err
		}
		if podReady(pod) {
			p.ready = append(p.ready, id)
		} else {
			p.starting = append(p.starting, id)
		}
	}
	return p, nil
}

// of returns the instance a node runs on, reading the node once per Observe. A node gone already
// is known by its name.
func (n nodeIDs) of(ctx context.Context, tg target, name string) (string, error) {
	if id, ok := n[name]; ok {
		return id, nil
	}
	node, err := tg.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		n[name] = name
	case err != nil:
		return "", fmt.Errorf("reading node %s of %s: %w", name, tg, err)
	default:
		n[name] = nodeInstance(node)
	}
	return n[name], nil
}

// nodeInstance is the id the node's cloud, and so its reclaim notices, know the node by: on GKE
// the VM's numeric id (what GCE's metadata server says), else the instance in its providerID,
// else (no cloud) the node's name.
func nodeInstance(node *corev1.Node) string {
	if id := node.Annotations[gceInstanceID]; id != "" {
		return id
	}
	if id := InstanceID(node.Spec.ProviderID); id != "" {
		return id
	}
	return node.Name
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
