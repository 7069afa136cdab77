package reclaim

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name      string
		yaml      string
		wantField string // empty: valid
	}{
		{name: "all four", yaml: `
aws_imds: {location: aws-use1, interval: 5s}
aws_eventbridge: {queue_url: "https://sqs.us-east-1.amazonaws.com/1/q", region: us-east-1, locations: {us-east-1: aws-use1}}
gcp_metadata: {location: gcp-usc1, wait_time: 60s}
azure_scheduled_events: {location: azure-eastus, instance: vm-spot}`},
		{name: "none", yaml: `{}`},
		{name: "missing location", yaml: `aws_imds: {interval: 5s}`, wantField: "aws_imds.location"},
		{name: "negative interval", yaml: `azure_scheduled_events: {location: a, interval: -1s}`,
			wantField: "azure_scheduled_events.interval"},
		{name: "endpoint not a url", yaml: `gcp_metadata: {location: g, endpoint: "metadata"}`,
			wantField: "gcp_metadata.endpoint"},
		{name: "queue without region", yaml: `aws_eventbridge: {queue_url: "https://sqs/q", location: x}`,
			wantField: "aws_eventbridge.region"},
		{name: "queue without location", yaml: `aws_eventbridge: {queue_url: "https://sqs/q", region: us-east-1}`,
			wantField: "aws_eventbridge.location"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Config
			if err := yaml.Unmarshal([]byte(tt.yaml), &c); err != nil {
				t.Fatal(err)
			}
			err := c.Validate()
			var fe *FieldError
			switch {
			case tt.wantField == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tt.wantField != "" && (!errors.As(err, &fe) || fe.Field != tt.wantField):
				t.Fatalf("Validate() = %v, want a problem with %s", err, tt.wantField)
			}
		})
	}
}

func TestConfigDurationsDecode(t *testing.T) {
	var c Config
	if err := yaml.Unmarshal([]byte(`aws_imds: {location: l, interval: 7s, timeout: 1500ms}`), &c); err != nil {
		t.Fatal(err)
	}
	if c.AWS.Interval != 7*time.Second || c.AWS.Timeout != 1500*time.Millisecond {
		t.Fatalf("decoded %+v", c.AWS)
	}
}

func TestNewBuildsTheConfiguredWatchers(t *testing.T) {
	w, err := New(context.Background(), Config{AWS: &AWSIMDSConfig{NodeConfig: NodeConfig{Location: "l"}},
		Azure: &AzureEventsConfig{NodeConfig: NodeConfig{Location: "a"}}}, Deps{Publisher: newRecorder()})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Runners()) != 2 || w.AWS == nil || w.Azure == nil || w.GCP != nil {
		t.Fatalf("New() built %+v", w)
	}
	if _, err := New(context.Background(), Config{AWS: &AWSIMDSConfig{}}, Deps{Publisher: newRecorder()}); err == nil {
		t.Fatal("New() accepted a watcher without a location")
	}
}

func TestTrackerForgetsOnlyNoticesNoLongerReported(t *testing.T) {
	clk := newClock(mustTime(t, "2026-09-13T11:58:00Z"))
	pub := newRecorder()
	tr := newTracker(Deps{Publisher: pub, Now: clk.Now}.withDefaults())
	n := notice{key: "k", kind: "interruption", lead: time.Minute, source: "test",
		where: Placement{Provider: "aws", Region: "r", Location: "l", Instance: "i"}}
	report := func() {
		if _, _, err := tr.report(context.Background(), n); err != nil {
			t.Fatal(err)
		}
	}
	report()
	for range 10 { // reported for 100 minutes, well past keep: still remembered
		clk.step(10 * time.Minute)
		report()
	}
	if got := len(pub.reclaims()); got != 1 {
		t.Fatalf("published %d times while the notice kept being reported, want 1", got)
	}
	clk.step(2 * time.Hour) // silent for longer than keep: forgotten, a new sighting is new
	report()
	if got := len(pub.reclaims()); got != 2 {
		t.Fatalf("published %d times, want 2 after the notice was forgotten", got)
	}
}
