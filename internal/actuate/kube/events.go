package kube

import (
	"context"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/bursar-dev/bursar/internal/actuate"
)

// The reasons of the Events the actuator records on the objects it changed (core/v1 Events, as
// Karpenter records on the nodes it launches), so that `kubectl describe` and `kubectl get
// events` show who changed an object's replicas, and why. Its identity needs create on events.
const (
	ReasonScaledUp     = "BursarScaledUp"
	ReasonScaledDown   = "BursarScaledDown"
	ReasonJobStarted   = "BursarJobStarted"
	ReasonJobSuspended = "BursarJobSuspended"
	ReasonCheckpoint   = "BursarCheckpointRequested"
)

// eventTimeout bounds recording an Event: it is told after the scale, and must not hold it up.
const eventTimeout = 5 * time.Second

// change is what a call did to an object: from and to replicas (a Job's 0 or 1), or a
// checkpoint request. The zero value is no change, and records nothing.
type change struct {
	uid        types.UID
	from, to   int
	checkpoint bool
}

func (c change) changed() bool { return c.checkpoint || c.from != c.to }

// reason names the change for the Event's reason.
func (c change) reason(job bool) string {
	switch {
	case c.checkpoint:
		return ReasonCheckpoint
	case job && c.to > 0:
		return ReasonJobStarted
	case job:
		return ReasonJobSuspended
	case c.to > c.from:
		return ReasonScaledUp
	}
	return ReasonScaledDown
}

// message says what was done, to which workload, where and why.
func (c change) message(tg target, t actuate.Target) string {
	var what string
	switch {
	case c.checkpoint:
		what = "Bursar asked the job to save its progress (a reclaim notice reached one of its instances)"
	case tg.isJob() && c.to > 0:
		what = "Bursar started the job"
	case tg.isJob():
		what = "Bursar suspended the job"
	default:
		what = fmt.Sprintf("Bursar scaled from %d to %d replicas", c.from, c.to)
	}
	msg := fmt.Sprintf("%s: workload %s, %s at %s", what, t.Workload, t.Market, t.Location)
	if t.Offer != "" {
		msg += ", offer " + t.Offer
	}
	if t.Reason != "" {
		msg += ", reason " + t.Reason
	}
	if t.ActionID != "" {
		msg += " (action " + t.ActionID + ")"
	}
	return msg
}

// record records c as an Event on tg's object. A failure is logged and changes nothing: the
// scale is done and stands. The Event's name derives from the action and the change, so an action
// sent again after an interrupted call records it once.
func (a *Actuator) record(ctx context.Context, tg target, t actuate.Target, c change) {
	if !c.changed() {
		return
	}
	now := a.opts.Now()
	reason := c.reason(tg.isJob())
	key := t.ActionID + "\x00" + reason + "\x00" + strconv.Itoa(c.to)
	if t.ActionID == "" {
		key += "\x00" + strconv.FormatInt(now.UnixNano(), 10)
	}
	h := fnv.New64a()
	h.Write([]byte(key))
	apiVersion := "apps/v1"
	if tg.isJob() {
		apiVersion = "batch/v1"
	}
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: tg.name + "." + hex.EncodeToString(h.Sum(nil)), Namespace: tg.namespace},
		InvolvedObject: corev1.ObjectReference{Kind: tg.kind, APIVersion: apiVersion, Namespace: tg.namespace,
			Name: tg.name, UID: c.uid},
		Reason: reason, Message: c.message(tg, t), Type: corev1.EventTypeNormal,
		Source:         corev1.EventSource{Component: "bursar"},
		FirstTimestamp: metav1.NewTime(now), LastTimestamp: metav1.NewTime(now), Count: 1,
		ReportingController: "bursar",
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), eventTimeout)
	defer cancel()
	_, err := tg.client.CoreV1().Events(tg.namespace).Create(ctx, ev, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		a.opts.Log.Warn("recording a kubernetes event on the object scaled; the scale stands", "object", tg.String(),
			"location", t.Location, "reason", reason, "err", err)
	}
}
