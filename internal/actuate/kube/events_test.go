package kube_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	k8stesting "k8s.io/client-go/testing"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/kube"
	"github.com/bursar-dev/bursar/internal/actuate/kube/kubetest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
)

// recorded lists the Events in namespace ns.
func recorded(t *testing.T, c *kubetest.Cluster, ns string) []corev1.Event {
	t.Helper()
	l, err := c.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// TestScaleRecordsAnEventOnTheObject: a scale that changes a Deployment records one Event on it
// saying which way, for which workload, where and why; a scale that changes nothing, or the same
// action sent again, records none.
func TestScaleRecordsAnEventOnTheObject(t *testing.T) {
	tests := []struct {
		name       string
		replicas   int
		wantReason string // empty: no Event
		wantMsg    []string
	}{
		{"up", 5, kube.ReasonScaledUp, []string{"from 2 to 5 replicas", "workload chat", "spot at use1",
			"offer use1/p5.48xlarge/spot", "reason demand_up", "action act-1"}},
		{"down", 0, kube.ReasonScaledDown, []string{"from 2 to 0 replicas", "workload chat"}},
		{"no change", 2, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := kubetest.New(deployment("chat-spot", 2, 2))
			a := setup(t, c)
			tg := actuate.Target{ActionID: "act-1", Group: group(events.Spot), Replicas: tt.replicas, Kind: "scale",
				Offer: "use1/p5.48xlarge/spot", Reason: "demand_up"}
			for range 2 { // the second is the same action sent again after an interrupted call
				if err := a.Scale(context.Background(), tg); err != nil {
					t.Fatal(err)
				}
			}
			evs := recorded(t, c, "inference")
			if tt.wantReason == "" {
				if len(evs) != 0 {
					t.Errorf("events = %+v, want none", evs)
				}
				return
			}
			if len(evs) != 1 {
				t.Fatalf("%d events, want 1: %+v", len(evs), evs)
			}
			e := evs[0]
			if o := e.InvolvedObject; o.Kind != "Deployment" || o.APIVersion != "apps/v1" || o.Namespace != "inference" || o.Name != "chat-spot" {
				t.Errorf("event is on %+v, want Deployment inference/chat-spot", o)
			}
			if e.Reason != tt.wantReason || e.Type != corev1.EventTypeNormal || e.Source.Component != "bursar" ||
				!e.LastTimestamp.Time.Equal(now) || e.Count != 1 {
				t.Errorf("event = %s %s from %s at %v (count %d)", e.Type, e.Reason, e.Source.Component, e.LastTimestamp, e.Count)
			}
			for _, w := range tt.wantMsg {
				if !strings.Contains(e.Message, w) {
					t.Errorf("message %q lacks %q", e.Message, w)
				}
			}
		})
	}
}

// TestEventThatCannotBeRecordedDoesNotFailTheScale: the API server refuses the Event (the Role
// lacks create on events, say): the scale stands, Scale succeeds and the log says why.
func TestEventThatCannotBeRecordedDoesNotFailTheScale(t *testing.T) {
	c := kubetest.New(deployment("chat-spot", 2, 2))
	c.PrependReactor("create", "events", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New(`events is forbidden: User "system:serviceaccount:bursar:bursar-arbiter" cannot create resource "events"`)
	})
	cfg, err := fleet.Parse([]byte(fleetYAML), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	a := kube.New(cfg, map[string]kubernetes.Interface{"use1": c}, kube.Options{Now: func() time.Time { return now },
		Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if err := a.Scale(context.Background(), actuate.Target{ActionID: "x", Group: group(events.Spot), Replicas: 4}); err != nil {
		t.Fatalf("Scale = %v, want the scale to stand", err)
	}
	if n, err := a.Desired(context.Background(), group(events.Spot)); err != nil || n != 4 {
		t.Errorf("Desired = %d, %v, want 4", n, err)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "cannot create resource") {
		t.Errorf("log does not say why no event was recorded:\n%s", logs.String())
	}
}

// TestJobChangesRecordEvents: starting, checkpointing and suspending a job's Job each record an
// Event on the Job.
func TestJobChangesRecordEvents(t *testing.T) {
	ctx := context.Background()
	c := kubetest.New(kubetest.Job("train", "tune-spot", true, 0))
	a := jobSetup(t, c)
	spot := actuate.Group{Workload: "tune", Location: "use1", Market: events.Spot}
	for _, tg := range []actuate.Target{
		{ActionID: "1", Group: spot, Replicas: 1, Kind: "launch", Reason: "deadline"},
		{ActionID: "2", Group: spot, Replicas: 1, Kind: actuate.KindCheckpoint, Reason: "reclaim"},
		{ActionID: "3", Group: spot, Replicas: 0, Kind: "drain", Reason: "reclaim"},
	} {
		if err := a.Scale(ctx, tg); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]string{}
	for _, e := range recorded(t, c, "train") {
		if e.InvolvedObject.Kind != "Job" || e.InvolvedObject.APIVersion != "batch/v1" || e.InvolvedObject.Name != "tune-spot" {
			t.Errorf("event %s is on %+v, want Job tune-spot", e.Reason, e.InvolvedObject)
		}
		got[e.Reason] = e.Message
	}
	for _, r := range []string{kube.ReasonJobStarted, kube.ReasonCheckpoint, kube.ReasonJobSuspended} {
		if !strings.Contains(got[r], "workload tune") {
			t.Errorf("%s event = %q, want one naming the workload", r, got[r])
		}
	}
	if len(got) != 3 {
		t.Errorf("events = %v, want three", got)
	}
}
