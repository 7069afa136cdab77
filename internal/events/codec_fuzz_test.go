package events

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"
)

// FuzzDecodePaths holds the one-pass path to the general one: whatever decodePlain reads, the
// general path reads the same way, and whatever the general path rejects, Decode rejects with
// the general path's own error.
func FuzzDecodePaths(f *testing.F) {
	for _, e := range samples() {
		data, err := Encode(e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"type":"plan.decided","version":"1","id":"i","at":"2026-11-30T06:00:00Z","workload":"w","plan_id":"p","actions":[{"id":"a"},{}],"usd_per_hour_before":0,"usd_per_hour_after":-0}`))
	f.Add([]byte(`{"type":"job.state","version":"1","id":"i","at":"2026-11-30T06:00:00Z","job":"j","state":"finished","work_s":1,"work_done_s":1,"deadline":"2026-11-30T06:00:00Z","overhead_s":0,"usd_spent":0,"preemptions":0,"lost_s":0,"finished_at":null}`))
	f.Add([]byte(`{"type":"job.progress","version":"1","id":"i","at":"2026-11-30T06:00:00Z","job":"j","work_done_s":1,"checkpoint_at":"2026-11-30T05:00:00Z","location":"l","market":"spot","estimated":true}`))
	f.Add([]byte(`{"type":"replica.state","version":"1","id":"i","at":"2026-11-30T06:00:00Z","workload":"w","location":"l","provider":"p","market":"spot","offer":"o","gpu_model":"g","gpus_per_replica":1,"usd_per_hour":0,"desired":1,"ready":1,"instances":[]}`))
	f.Add([]byte(`{"type":"replica.state","version":"1","id":"i","at":"2026-11-30T06:00:00Z","workload":"w","location":"l","provider":"p","market":"spot","offer":"o","gpu_model":"g","gpus_per_replica":1,"usd_per_hour":0,"desired":1,"ready":1,"instances":["i-\u0030",null, ""]}`))
	f.Add([]byte(`{"type":"replica.state","version":"1","id":"i","at":"2026-11-30T06:00:00Z","workload":"w","location":"l","provider":"p","market":"spot","offer":"o","gpu_model":"g","gpus_per_replica":1,"usd_per_hour":0,"desired":1,"ready":1,"instances":null}`))
	f.Add([]byte(`{"type":"tokens.sample","version":"1.9","id":"\u0069","at":"2026-11-30T06:00:00.5Z","location":"l","workload":"w","replica":"r","server":"tgi","prompt_tokens":1,"generation_tokens":2,"requests":3,"reset":false}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		general, generalErr := decodeGeneral(data)
		got, err := Decode(data)
		if (err == nil) != (generalErr == nil) || (err != nil && err.Error() != generalErr.Error()) {
			t.Fatalf("Decode error = %v, general path's = %v", err, generalErr)
		}
		if err == nil && !reflect.DeepEqual(got, general) {
			t.Fatalf("Decode read %#v, the general path %#v", got, general)
		}
		plain := decodePlain(data)
		if plain == nil {
			return
		}
		if generalErr != nil && Validate(plain) == nil {
			t.Fatalf("decodePlain accepted what the general path rejects (%v): %#v", generalErr, plain)
		}
		if generalErr == nil && !reflect.DeepEqual(plain, general) {
			t.Fatalf("decodePlain read %#v, the general path %#v", plain, general)
		}
	})
}

// FuzzEncode holds appendEvent to json.Marshal over free text, numbers and times: the same bytes,
// or a failure exactly where json.Marshal fails.
func FuzzEncode(f *testing.F) {
	f.Add("reclaim", `"quoted" <b> & ü`+"\u2028\x00\xff", 87.5, 1e-7, int64(-3), int64(0), true)
	f.Add("", "\x7f", math.Copysign(0, -1), 1e21, int64(math.MaxInt64), int64(-62135596800), false)
	f.Fuzz(func(t *testing.T, s1, s2 string, f1, f2 float64, n, secs int64, b bool) {
		at := time.Unix(secs, n).UTC()
		evs := []Event{
			&ActionUpdated{Meta: Meta{Type: TypeActionUpdated, ID: s1, At: at}, Workload: s1,
				ActionID: s2, Status: ActionStatus(s1), Kind: s2, Replicas: int(n), Reason: s2,
				Detail: s1, Offer: s2},
			&GPUSample{Meta: Meta{Version: s2, At: at}, Location: s1, UtilizationPct: f1,
				PowerW: f2, MemoryUsedBytes: n, TemperatureC: -f1},
			&PlanDecided{Meta: Meta{At: at}, Workload: s1, USDPerHourWas: f2, NeedsApproval: b,
				Actions: []PlanAction{{ID: s2, Delta: int(n), NeedsApproval: !b, Market: Market(s1)}}},
			&TokensSample{Meta: Meta{At: at}, Replica: s2, Requests: n, Reset: b},
			&ReplicaState{Meta: Meta{At: at}, Workload: s1, USDPerHour: f1, Instances: []string{s1, s2}},
			&JobState{Meta: Meta{At: at}, Job: s1, Reason: s2, WorkDoneS: f1, LostS: f2,
				Preemptions: int(n), FinishedAt: &at, Market: Market(s2)},
			&JobProgress{Meta: Meta{At: at}, Job: s2, WorkDoneS: f2, CheckpointAt: &at, Estimated: b},
		}
		for _, e := range evs {
			want, wantErr := json.Marshal(e)
			got, ok := appendEvent(nil, e)
			if ok != (wantErr == nil) || string(got) != string(want) {
				t.Fatalf("appendEvent = %s (ok %v)\n  json.Marshal = %s (err %v)", got, ok, want, wantErr)
			}
		}
	})
}
