package reclaim

import (
	"testing"
	"time"
)

// The parsers below read what a metadata service or a queue sends. They must never panic, and
// what they accept must be usable: a notice with a time.

func FuzzParseInstanceAction(f *testing.F) {
	f.Add(fixture(f, "aws-imds-spot-instance-action.json"))
	f.Add([]byte(`{"action":"stop","time":"2017-09-18T08:22:00+02:00"}`))
	f.Add([]byte(`{"action":`))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := ParseInstanceAction(b)
		if err == nil && (a.Action == "" || a.Time.IsZero()) {
			t.Fatalf("accepted %q without action or time", b)
		}
	})
}

func FuzzParseRebalance(f *testing.F) {
	f.Add(fixture(f, "aws-imds-rebalance.json"))
	f.Add([]byte(`{"noticeTime": null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		at, err := ParseRebalance(b)
		if err == nil && at.IsZero() {
			t.Fatalf("accepted %q without a notice time", b)
		}
	})
}

func FuzzParseEventBridge(f *testing.F) {
	f.Add(fixture(f, "aws-eventbridge-spot-interruption.json"))
	f.Add(fixture(f, "aws-eventbridge-rebalance-recommendation.json"))
	f.Add([]byte(`{"detail-type":"EC2 Spot Instance Interruption Warning","detail":{}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := ParseEventBridge(b)
		if err == nil && (e.Detail.InstanceID == "" || e.Region == "" || e.Time.IsZero()) {
			t.Fatalf("accepted %q without instance, region or time", b)
		}
	})
}

func FuzzParseGCPValue(f *testing.F) {
	for _, name := range []string{"gcp-metadata-preempted-true.txt", "gcp-metadata-preempted-false.txt",
		"gcp-metadata-maintenance-event-none.txt", "gcp-metadata-maintenance-event-terminate.txt"} {
		f.Add("instance/preempted", fixture(f, name))
		f.Add("instance/maintenance-event", fixture(f, name))
	}
	f.Fuzz(func(t *testing.T, path string, b []byte) {
		active, err := ParseGCPValue(path, b)
		if err != nil && active {
			t.Fatalf("ParseGCPValue(%q, %q) reported a reclaim with an error", path, b)
		}
	})
}

func FuzzParseScheduledEvents(f *testing.F) {
	f.Add(fixture(f, "azure-scheduledevents-preempt.json"))
	f.Add(fixture(f, "azure-scheduledevents-empty.json"))
	f.Add([]byte(`{"Events":[{"EventId":"x","NotBefore":"Mon, 02 Jan 2006 15:04:05 -0700"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		doc, err := ParseScheduledEvents(b)
		if err != nil {
			return
		}
		for _, e := range doc.Events {
			nb, err := ParseNotBefore(e.NotBefore)
			if err != nil || e.EventID == "" || nb.Location() != time.UTC {
				t.Fatalf("accepted event %+v: NotBefore %v, %v", e, nb, err)
			}
		}
	})
}
