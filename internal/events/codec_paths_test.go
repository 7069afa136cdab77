package events

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

var pathsAt = time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)

// samples returns one valid, stamped event of every type (eventstest imports this package, so
// the internal tests keep their own).
func samples() []Event {
	at := pathsAt
	all := []Event{
		&PriceObserved{Meta: Meta{At: at}, Provider: "aws", Region: "us-east-1", Zone: "us-east-1a",
			InstanceType: "p5.48xlarge", GPUModel: "H100-80GB", GPUCount: 8, GPUMemoryGB: 640,
			Market: Spot, USDPerHour: 31.4, Source: "aws-spot"},
		&CapacityReclaimed{Meta: Meta{At: at}, Provider: "aws", Region: "us-east-1",
			Location: "aws-use1", Instance: "i-0abc", Kind: ReclaimInterruption, NoticeAt: at,
			Deadline: at.Add(2 * time.Minute), Source: "aws-imds"},
		&GPUSample{Meta: Meta{At: at.Add(123456789)}, Location: "aws-use1", Node: "node-1",
			UUID: "GPU-1", Index: 3, Model: "H100-80GB", UtilizationPct: 87.5,
			MemoryUsedBytes: 60 << 30, MemoryTotalBytes: 80 << 30, PowerW: 612.3, TemperatureC: -4},
		&TokensSample{Meta: Meta{At: at}, Location: "aws-use1", Workload: "llm", Replica: "llm-1",
			Server: "vllm", PromptTokens: 1200, GenerationTokens: 3400, Requests: 17, Reset: true},
		&ReplicaState{Meta: Meta{At: at}, Workload: "llm", Location: "aws-use1", Provider: "aws",
			Market: OnDemand, Offer: "aws-use1/p5/od", GPUModel: "H100-80GB", GPUs: 8,
			USDPerHour: 1e-7, Desired: 3, Ready: 0},
		&ReplicaState{Meta: Meta{At: at}, Workload: "llm", Location: "gcp-euw4", Provider: "gcp",
			Market: Spot, Offer: "gcp-euw4/a3/spot", GPUModel: "H100-80GB", GPUs: 8, USDPerHour: 30,
			Desired: 2, Ready: 2, Instances: []string{"4417051372", `gke-"pool"-<1>-ü`}},
		&PlanDecided{Meta: Meta{At: at}, Workload: "llm", PlanID: "plan-1",
			Actions: []PlanAction{{ID: "a1", Kind: "launch", Location: "gcp-usc1", Market: Spot,
				Replicas: 2, Delta: 1, Reason: "reclaim", NeedsApproval: true},
				{ID: "a2", Kind: "drain", Location: "aws-use1", Offer: "o", Market: Reserved,
					Delta: -1, Reason: "cheaper"}},
			USDPerHourWas: 94.2, USDPerHourNow: 2e21, NeedsApproval: true},
		&PlanDecided{Meta: Meta{At: at.Add(time.Hour)}, Workload: "idle", PlanID: "plan-2"},
		&ActionUpdated{Meta: Meta{At: at}, Workload: "llm", ActionID: "a1", Status: ActionApplied,
			Kind: "scale", Location: "gcp-usc1", Market: Spot, Replicas: 2,
			Detail: `said "no" <b>&</b> to ünïcode, \ and a tab	and U+2028` + "\u2028"},
		&BudgetAlert{Meta: Meta{At: at}, Policy: "llm-monthly", Scope: "workload=llm",
			Period: "month", PeriodStart: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
			Basis: "forecast", Threshold: "80%", Spend: 40000.25, Limit: 50000, Currency: "USD",
			Cleared: true},
		&JobProgress{Meta: Meta{At: at}, Job: "ft-1", WorkDoneS: 1234.5, Location: "aws-use1",
			Market: Spot, Estimated: true},
		&JobProgress{Meta: Meta{At: at}, Job: "ft-2", WorkDoneS: 0, CheckpointAt: &at,
			Location: "gcp-usc1", Market: OnDemand},
		&JobState{Meta: Meta{At: at}, Job: "ft-1", State: JobWaiting, WorkS: 172800,
			WorkDoneS: 1e-7, Deadline: at.Add(52 * time.Hour), Preemptions: 2, LostS: 360,
			Reason: `reclaimed "spot" <notice> & gone`},
		&JobState{Meta: Meta{At: at}, Job: "ft-2", Team: "research", State: JobFinished,
			WorkS: 3600, WorkDoneS: 3600, Deadline: at, OverheadS: 720, Location: "gcp-usc1",
			Market: OnDemand, GPUs: 1, USDPerHour: 3.06, OnDemandUSD: 3.06, USDSpent: 3.672,
			FinishedAt: &pathsAt},
	}
	for _, e := range all {
		Stamp(e)
	}
	return all
}

// TestMembersMatchStructTags holds the member lists to the struct tags: the same names in the
// same order, omitempty where the tag has it, and each pointing at its own field.
func TestMembersMatchStructTags(t *testing.T) {
	check := func(t *testing.T, v reflect.Value, ms []member) {
		t.Helper()
		var want []member
		var walk func(v reflect.Value)
		walk = func(v reflect.Value) {
			for i := range v.NumField() {
				f := v.Type().Field(i)
				if f.Anonymous {
					walk(v.Field(i))
					continue
				}
				name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
				want = append(want, member{name: name, omitEmpty: strings.Contains(opts, "omitempty"),
					val: v.Field(i).Addr().UnsafePointer()})
			}
		}
		walk(v)
		if len(ms) != len(want) {
			t.Fatalf("%d members, the struct has %d fields", len(ms), len(want))
		}
		for i, m := range ms {
			got := member{m.name, m.omitEmpty, reflect.ValueOf(m.val).UnsafePointer()}
			if got != want[i] {
				t.Errorf("member %d = %s (omitempty %v), struct field is %s (omitempty %v), or the pointer differs",
					i, m.name, m.omitEmpty, want[i].name, want[i].omitEmpty)
			}
		}
	}
	for _, typ := range Types {
		t.Run(string(typ), func(t *testing.T) {
			e := New(typ)
			var buf [maxMembers]member
			check(t, reflect.ValueOf(e).Elem(), membersOf(e, buf[:0]))
		})
	}
	t.Run("plan action", func(t *testing.T) {
		var a PlanAction
		check(t, reflect.ValueOf(&a).Elem(), a.members(nil))
	})
}

// TestAppendEventMatchesEncodingJSON: the bytes on the wire are json.Marshal's, byte for byte,
// including escapes, HTML characters, non-ASCII text and the float forms.
func TestAppendEventMatchesEncodingJSON(t *testing.T) {
	for _, e := range samples() {
		t.Run(string(e.EventType()), func(t *testing.T) {
			want, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := appendEvent(nil, e)
			if !ok || string(got) != string(want) {
				t.Errorf("appendEvent = %s (ok %v)\n  json.Marshal = %s", got, ok, want)
			}
		})
	}
}

// TestEncodeKeepsEncodingJSONErrors: what appendEvent cannot write fails as json.Marshal fails
// (and Validate refuses it first).
func TestEncodeKeepsEncodingJSONErrors(t *testing.T) {
	tests := []struct {
		name string
		e    Event
	}{
		{"year past 9999", &BudgetAlert{Meta: Meta{At: pathsAt}, Policy: "p", Scope: "s",
			Period: "day", PeriodStart: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
			Basis: "actual", Threshold: "1", Currency: "USD"}},
		{"optional time past 9999", &JobState{Meta: Meta{At: pathsAt}, Job: "j", State: JobFinished,
			WorkS: 1, Deadline: pathsAt, FinishedAt: new(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, want := json.Marshal(Stamp(tt.e))
			if want == nil {
				t.Fatal("json.Marshal succeeded; the case tests nothing")
			}
			if got, ok := appendEvent(nil, tt.e); ok {
				t.Errorf("appendEvent wrote %s where json.Marshal fails with %v", got, want)
			}
			// Encode refuses it before either writes: no event may carry a year past 2099.
			if _, err := Encode(tt.e); !errors.Is(err, ErrOutOfRange) {
				t.Errorf("Encode error = %v, want ErrOutOfRange", err)
			}
		})
	}
	if _, ok := appendFloat(nil, math.NaN()); ok {
		t.Error("appendFloat wrote a NaN")
	}
}

// TestDecodePlainReadsWhatEncodeWrites: every event Encode writes takes the one-pass path and
// comes back equal.
func TestDecodePlainReadsWhatEncodeWrites(t *testing.T) {
	for _, e := range samples() {
		t.Run(string(e.EventType()), func(t *testing.T) {
			data, err := Encode(e)
			if err != nil {
				t.Fatal(err)
			}
			got := decodePlain(data)
			if got == nil {
				t.Fatalf("decodePlain gave %s to the general path", data)
			}
			if !reflect.DeepEqual(got, e) {
				t.Errorf("decodePlain changed the event:\n got %#v\nwant %#v", got, e)
			}
		})
	}
}

// TestDecodePlainDefers lists documents the one-pass path must leave to the general path, which
// either reads them (case-folded keys, unknown fields, escapes) or rejects them with a reason.
func TestDecodePlainDefers(t *testing.T) {
	const gpu = `"type":"gpu.sample","version":"1.0","id":"x","at":"2026-11-30T06:00:00Z",` +
		`"location":"l","node":"n","uuid":"u","index":0,"model":"m","utilization_pct":1,` +
		`"memory_used_bytes":1,"memory_total_bytes":2,"power_w":3`
	tests := []struct{ name, doc string }{
		{"type not first", `{"version":"1.0",` + strings.Replace(gpu, `"version":"1.0",`, "", 1) + `,"temperature_c":4}`},
		{"missing field", `{` + gpu + `}`},
		{"null field", `{` + gpu + `,"temperature_c":null}`},
		{"repeated key", `{` + gpu + `,"temperature_c":4,"power_w":5}`},
		{"unknown key", `{` + gpu + `,"temperature_c":4,"fan_pct":5}`},
		{"key in another case", `{` + gpu + `,"Temperature_C":4}`},
		{"escaped key", `{` + strings.Replace(gpu, `"node":"n"`, `"no\u0064e":"n"`, 1) + `,"temperature_c":4}`},
		{"bad escape", `{` + strings.Replace(gpu, `"node":"n"`, `"node":"\x"`, 1) + `,"temperature_c":4}`},
		{"control character", `{` + strings.Replace(gpu, `"node":"n"`, "\"node\":\"\n\"", 1) + `,"temperature_c":4}`},
		{"int as float", `{` + strings.Replace(gpu, `"index":0`, `"index":0.0`, 1) + `,"temperature_c":4}`},
		{"float out of range", `{` + gpu + `,"temperature_c":1e400}`},
		{"trailing data", `{` + gpu + `,"temperature_c":4} {}`},
		{"trailing comma", `{` + gpu + `,"temperature_c":4,}`},
		{"major version 2", `{` + strings.Replace(gpu, `"1.0"`, `"2.0"`, 1) + `,"temperature_c":4}`},
		{"unknown type", `{` + strings.Replace(gpu, `gpu.sample`, `gpu.guess`, 1) + `,"temperature_c":4}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if e := decodePlain([]byte(tt.doc)); e != nil {
				t.Errorf("decodePlain read %s as %#v", tt.doc, e)
			}
		})
	}
	if decodePlain([]byte(`{`+gpu+`,"temperature_c":4}`)) == nil {
		t.Error("the plain base document itself was deferred: the cases above test nothing")
	}
}
