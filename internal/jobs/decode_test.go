package jobs

import (
	"errors"
	"testing"
)

func TestJobValuesThatAreNotJobsAreRefused(t *testing.T) {
	for _, v := range []string{``, `null`, `[]`, `{"stream":"KV_bursar_jobs","seq":3}`,
		`{"type":"io.nats.jetstream.api.v1.account_info_response"}`, `{"workload":{"name":"tune"}}`,
		`{"workload":{"name":"other","job":{"work":"1h"}}}`, `{"state":"exploded"}`, `{"state":7}`} {
		if _, err := DecodeSpec("job.tune", []byte(v)); !errors.Is(err, errNotAJob) {
			t.Errorf("DecodeSpec(%q) = %v, want errNotAJob", v, err)
		}
		if _, err := DecodeRun([]byte(v)); !errors.Is(err, errNotAJob) {
			t.Errorf("DecodeRun(%q) = %v, want errNotAJob", v, err)
		}
	}
	if _, err := DecodeRun([]byte(`{"state":"running","done":60000000000}`)); err != nil {
		t.Errorf("a run: %v", err)
	}
}

func FuzzDecodeJobValues(f *testing.F) {
	f.Add("job.tune", []byte(`{"workload":{"name":"tune","job":{"work":"1h"}}}`))
	f.Add("state.tune", []byte(`{"state":"running"}`))
	f.Add("job.tune", []byte(`{"stream":"KV_bursar_jobs","seq":3}`))
	f.Fuzz(func(t *testing.T, key string, data []byte) {
		if j, err := DecodeSpec(key, data); err == nil && SpecKey(j.Workload.Name) != key {
			t.Fatalf("job %q decoded under %q", j.Workload.Name, key)
		} else if err != nil && !errors.Is(err, errNotAJob) {
			t.Fatalf("error %v is not errNotAJob", err)
		}
		if _, err := DecodeRun(data); err != nil && !errors.Is(err, errNotAJob) {
			t.Fatalf("error %v is not errNotAJob", err)
		}
	})
}
