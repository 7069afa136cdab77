// Package kube scales workloads in Kubernetes clusters, one cluster per location, through the
// scale subresource of a Deployment or StatefulSet, and starts and stops jobs through the
// suspend field of a batch/v1 Job (see job.go). Spot and on-demand replicas are separate
// objects (named in bursar.yaml), so each market is scaled on its own. Observe also lists the
// objects' pods and reads their nodes, so the arbiter learns which cloud instances each group runs
// on and which pods got no node: its identity needs get and update on deployments/scale (or
// statefulsets/scale), get on deployments (statefulsets), list on pods and get on nodes, and
// create on events: each change is recorded as an Event on the object changed (events.go).
package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
)

// Actuator scales the workloads of the Kubernetes locations of a fleet.
type Actuator struct {
	cfg     *fleet.Config
	clients map[string]kubernetes.Interface // by location
	opts    Options
}

// Options tune how Observe reads pods. The zero value takes the defaults.
type Options struct {
	// NodeWait is how long an Unschedulable pod may wait for a node before it counts as pending
	// for want of capacity, where a location's node_wait does not say (default DefaultNodeWait).
	NodeWait time.Duration
	// Now is the clock the wait is measured on, and the Events' time (default time.Now).
	Now func() time.Time
	// Log takes what goes wrong beside a call, such as an Event that could not be recorded
	// (default slog.Default()).
	Log *slog.Logger
}

var (
	_ actuate.Actuator = (*Actuator)(nil)
	_ actuate.Reporter = (*Actuator)(nil)
)

// New returns an actuator over the given clients, one per location name.
func New(cfg *fleet.Config, clients map[string]kubernetes.Interface, opts Options) *Actuator {
	if opts.NodeWait <= 0 {
		opts.NodeWait = DefaultNodeWait
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	return &Actuator{cfg: cfg, clients: clients, opts: opts}
}

// target is where a group lives in its cluster.
type target struct {
	client    kubernetes.Interface
	namespace string
	kind      string
	name      string
	nodeWait  time.Duration // how long an Unschedulable pod waits for a node at this location
}

func (a *Actuator) resolve(g actuate.Group) (target, error) {
	loc, ok := a.cfg.Location(g.Location)
	c, okc := a.clients[g.Location]
	if !ok || !okc {
		return target{}, fmt.Errorf("%w: no kubernetes client for location %q", actuate.ErrNotFound, g.Location)
	}
	w, ok := a.cfg.Workload(g.Workload)
	if !ok {
		return target{}, fmt.Errorf("%w: workload %q is not in bursar.yaml", actuate.ErrNotFound, g.Workload)
	}
	name := w.Kubernetes.Object(g.Market)
	if name == "" {
		return target{}, fmt.Errorf("%w: workload %s names no object for market %s (kubernetes.%s in bursar.yaml)",
			actuate.ErrNotFound, g.Workload, g.Market, g.Market)
	}
	kind := w.KubeKind()
	ns := loc.Actuator.Namespace
	if ns == "" {
		ns = "default"
	}
	wait := loc.Actuator.NodeWait
	if wait <= 0 {
		wait = a.opts.NodeWait
	}
	return target{client: c, namespace: ns, kind: kind, name: name, nodeWait: wait}, nil
}

func (t target) getScale(ctx context.Context) (*autoscalingv1.Scale, error) {
	if t.kind == "StatefulSet" {
		return t.client.AppsV1().StatefulSets(t.namespace).GetScale(ctx, t.name, metav1.GetOptions{})
	}
	return t.client.AppsV1().Deployments(t.namespace).GetScale(ctx, t.name, metav1.GetOptions{})
}

func (t target) updateScale(ctx context.Context, s *autoscalingv1.Scale) error {
	var err error
	if t.kind == "StatefulSet" {
		_, err = t.client.AppsV1().StatefulSets(t.namespace).UpdateScale(ctx, t.name, s, metav1.UpdateOptions{})
	} else {
		_, err = t.client.AppsV1().Deployments(t.namespace).UpdateScale(ctx, t.name, s, metav1.UpdateOptions{})
	}
	return err
}

func (t target) String() string { return t.kind + " " + t.namespace + "/" + t.name }

// Scale sets the group's object to t.Replicas replicas. A conflict (someone else changed the
// object since it was read) is retried on a fresh read; setting an absolute count makes that safe.
func (a *Actuator) Scale(ctx context.Context, t actuate.Target) error {
	tg, err := a.resolve(t.Group)
	if err != nil {
		return err
	}
	switch {
	case tg.isJob():
		c, err := tg.scaleJob(ctx, t, a.opts.Now())
		if err != nil {
			return a.explain(t.Group, tg, err)
		}
		a.record(ctx, tg, t, c)
		return nil
	case t.Kind == actuate.KindCheckpoint:
		return nil // only a job checkpoints; a serving workload has nothing to save
	}
	var c change
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c = change{}
		s, err := tg.getScale(ctx)
		if err != nil {
			return err
		}
		if s.Spec.Replicas == int32(t.Replicas) {
			return nil
		}
		c = change{uid: s.UID, from: int(s.Spec.Replicas), to: t.Replicas}
		s.Spec.Replicas = int32(t.Replicas)
		return tg.updateScale(ctx, s)
	})
	if err != nil {
		return a.explain(t.Group, tg, err)
	}
	a.record(ctx, tg, t, c)
	return nil
}

// Desired reads the object's desired replicas.
func (a *Actuator) Desired(ctx context.Context, g actuate.Group) (int, error) {
	tg, err := a.resolve(g)
	if err != nil {
		return 0, err
	}
	if tg.isJob() {
		j, err := tg.getJob(ctx)
		if err != nil {
			return 0, a.explain(g, tg, err)
		}
		return jobDesired(j), nil
	}
	s, err := tg.getScale(ctx)
	if err != nil {
		return 0, a.explain(g, tg, err)
	}
	return int(s.Spec.Replicas), nil
}

func (a *Actuator) explain(g actuate.Group, tg target, err error) error {
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%w: %s in location %s does not exist; create it or fix kubernetes.%s of workload %s in bursar.yaml",
			actuate.ErrNotFound, tg, g.Location, g.Market, g.Workload)
	}
	return fmt.Errorf("scaling %s in location %s: %w", tg, g.Location, err)
}

// Observe reads every workload's objects in every cluster: desired and ready replicas, the cloud
// instances their pods run on (so a reclaim notice finds its workload), and the pods that got no
// node for want of capacity.
func (a *Actuator) Observe(ctx context.Context) ([]actuate.Observed, error) {
	var out []actuate.Observed
	var errs []error
	locs := make([]string, 0, len(a.clients))
	for l := range a.clients {
		locs = append(locs, l)
	}
	slices.Sort(locs)
	for _, loc := range locs {
		nodes := nodeIDs{}
		for _, w := range a.cfg.Workloads {
			for _, m := range []events.Market{events.Spot, events.OnDemand, events.Reserved} {
				if w.Kubernetes.Object(m) == "" {
					continue
				}
				g := actuate.Group{Workload: w.Name, Location: loc, Market: m}
				o, err := a.observe(ctx, g, nodes)
				if errors.Is(err, actuate.ErrNotFound) {
					continue // not deployed at this location: nothing runs there
				}
				if err != nil {
					errs = append(errs, err)
					continue
				}
				out = append(out, o)
			}
		}
	}
	return out, errors.Join(errs...)
}

func (a *Actuator) observe(ctx context.Context, g actuate.Group, nodes nodeIDs) (actuate.Observed, error) {
	tg, err := a.resolve(g)
	if err != nil {
		return actuate.Observed{}, err
	}
	o := actuate.Observed{Group: g}
	var desired *int32
	var sel *metav1.LabelSelector
	switch {
	case tg.isJob():
		j, err := tg.client.BatchV1().Jobs(tg.namespace).Get(ctx, tg.name, metav1.GetOptions{})
		if err != nil {
			return o, a.explain(g, tg, err)
		}
		n := int32(jobDesired(j))
		desired, o.Ready, sel = &n, jobReady(j), j.Spec.Selector
	case tg.kind == "StatefulSet":
		s, err := tg.client.AppsV1().StatefulSets(tg.namespace).Get(ctx, tg.name, metav1.GetOptions{})
		if err != nil {
			return o, a.explain(g, tg, err)
		}
		desired, o.Ready, sel = s.Spec.Replicas, int(s.Status.ReadyReplicas), s.Spec.Selector
	default:
		d, err := tg.client.AppsV1().Deployments(tg.namespace).Get(ctx, tg.name, metav1.GetOptions{})
		if err != nil {
			return o, a.explain(g, tg, err)
		}
		desired, o.Ready, sel = d.Spec.Replicas, int(d.Status.ReadyReplicas), d.Spec.Selector
	}
	o.Desired = 1 // Kubernetes' default when spec.replicas is unset
	if desired != nil {
		o.Desired = int(*desired)
	}
	p, err := a.place(ctx, tg, sel, nodes)
	if err != nil {
		return o, fmt.Errorf("location %s: %w", g.Location, err)
	}
	p.fill(&o)
	return o, nil
}
