package events_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/events/eventstest"
)

var at = time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)

func TestRoundTripEveryType(t *testing.T) {
	seen := map[events.Type]bool{}
	for _, e := range eventstest.Samples(at, 1) {
		t.Run(string(e.EventType()), func(t *testing.T) {
			data, err := events.Encode(e)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			got, err := events.Decode(data)
			if err != nil {
				t.Fatalf("Decode(%s): %v", data, err)
			}
			if !reflect.DeepEqual(got, e) {
				t.Errorf("round trip changed the event:\n got %#v\nwant %#v", got, e)
			}
			seen[e.EventType()] = true
		})
	}
	for _, typ := range events.Types {
		if !seen[typ] {
			t.Errorf("no sample of %s", typ)
		}
	}
}

func TestIDIsDeterministic(t *testing.T) {
	a := eventstest.Samples(at, 1)
	b := eventstest.Samples(at, 1)
	c := eventstest.Samples(at.Add(time.Second), 1)
	d := eventstest.Samples(at, 2)
	for i := range a {
		if a[i].Header().ID != b[i].Header().ID {
			t.Errorf("%s: same fact, different ids", a[i].EventType())
		}
		if a[i].Header().ID == c[i].Header().ID {
			t.Errorf("%s: different times, same id", a[i].EventType())
		}
		if a[i].Header().ID == d[i].Header().ID {
			t.Errorf("%s: different facts, same id", a[i].EventType())
		}
	}
}

func TestSubjects(t *testing.T) {
	tests := []struct {
		name string
		e    events.Event
		want string
	}{
		{"price", &events.PriceObserved{Provider: "aws", Region: "us-east-1"}, "bursar.price.aws.us-east-1"},
		{"dots and spaces become underscores", &events.PriceObserved{Provider: "my cloud", Region: "eu.west*"}, "bursar.price.my_cloud.eu_west_"},
		{"empty token", &events.GPUSample{Location: "", Node: "n1"}, "bursar.gpu._.n1"},
		{"reclaim", &events.CapacityReclaimed{Provider: "gcp", Region: "us-central1"}, "bursar.reclaim.gcp.us-central1"},
		{"tokens", &events.TokensSample{Location: "l", Workload: "w"}, "bursar.tokens.l.w"},
		{"fleet", &events.ReplicaState{Workload: "w", Location: "l"}, "bursar.fleet.w.l"},
		{"decision", &events.PlanDecided{Workload: "w"}, "bursar.decision.w"},
		{"action", &events.ActionUpdated{Workload: "w"}, "bursar.action.w"},
		{"budget", &events.BudgetAlert{Policy: "p"}, "bursar.budget.p"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.e.Subject(); got != tt.want {
				t.Errorf("Subject() = %q, want %q", got, tt.want)
			}
		})
	}
}

// mutate decodes a valid sample of type typ into a map, applies f and re-encodes it.
func mutate(t *testing.T, typ events.Type, f func(m map[string]any)) []byte {
	t.Helper()
	for _, e := range eventstest.Samples(at, 1) {
		if e.EventType() != typ {
			continue
		}
		data, err := events.Encode(e)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	t.Fatalf("no sample of %s", typ)
	return nil
}

func TestDecodeRejects(t *testing.T) {
	set := func(k string, v any) func(map[string]any) { return func(m map[string]any) { m[k] = v } }
	del := func(k string) func(map[string]any) { return func(m map[string]any) { delete(m, k) } }
	tests := []struct {
		name      string
		typ       events.Type
		change    func(map[string]any)
		wantErr   error
		wantField string
	}{
		{"unknown type", events.TypePriceObserved, set("type", "price.guessed"), events.ErrUnknownType, "type"},
		{"missing type", events.TypePriceObserved, del("type"), events.ErrMissingField, "type"},
		{"type not a string", events.TypePriceObserved, set("type", 7), events.ErrMalformed, "type"},
		{"unknown major version", events.TypePriceObserved, set("version", "2.0"), events.ErrVersion, "version"},
		{"garbage version", events.TypePriceObserved, set("version", "v-one"), events.ErrVersion, "version"},
		{"missing version", events.TypeGPUSample, del("version"), events.ErrMissingField, "version"},
		{"missing id", events.TypeGPUSample, del("id"), events.ErrMissingField, "id"},
		{"empty id", events.TypeGPUSample, set("id", ""), events.ErrMissingField, "id"},
		{"missing price", events.TypePriceObserved, del("usd_per_hour"), events.ErrMissingField, "usd_per_hour"},
		{"null price", events.TypePriceObserved, set("usd_per_hour", nil), events.ErrMissingField, "usd_per_hour"},
		{"negative price", events.TypePriceObserved, set("usd_per_hour", -0.5), events.ErrOutOfRange, "usd_per_hour"},
		{"price is a string", events.TypePriceObserved, set("usd_per_hour", "1.2"), events.ErrMalformed, "usd_per_hour"},
		{"bad market", events.TypePriceObserved, set("market", "black"), events.ErrOutOfRange, "market"},
		{"zero gpus", events.TypePriceObserved, set("gpu_count", 0), events.ErrOutOfRange, "gpu_count"},
		{"utilization over 100", events.TypeGPUSample, set("utilization_pct", 100.5), events.ErrOutOfRange, "utilization_pct"},
		{"negative utilization", events.TypeGPUSample, set("utilization_pct", -1), events.ErrOutOfRange, "utilization_pct"},
		{"memory used over total", events.TypeGPUSample, set("memory_used_bytes", 1<<40), events.ErrOutOfRange, "memory_used_bytes"},
		{"non-UTC time", events.TypeGPUSample, set("at", "2026-11-30T08:00:00+02:00"), events.ErrOutOfRange, "at"},
		{"zero time", events.TypeGPUSample, set("at", "0001-01-01T00:00:00Z"), events.ErrMissingField, "at"},
		{"time not a time", events.TypeGPUSample, set("at", "yesterday"), events.ErrMalformed, ""},
		// Issue 27: ClickHouse could not read this one (code 41) and the recorder stopped on it.
		{"time in the first hours of 1970", events.TypeGPUSample, set("at", "1970-01-01T00:00:00.5Z"), events.ErrOutOfRange, "at"},
		{"time before 2000", events.TypeGPUSample, set("at", "1999-12-31T23:59:59.999Z"), events.ErrOutOfRange, "at"},
		{"time in 2100", events.TypeTokensSample, set("at", "2100-01-01T00:00:00Z"), events.ErrOutOfRange, "at"},
		{"deadline past what the store holds", events.TypeCapacityReclaimed, set("deadline", "2300-01-01T00:00:00Z"), events.ErrOutOfRange, "deadline"},
		{"job deadline in 2200", events.TypeJobState, set("deadline", "2200-01-01T00:00:00Z"), events.ErrOutOfRange, "deadline"},
		{"budget period in 1969", events.TypeBudgetAlert, set("period_start", "1969-12-01T00:00:00Z"), events.ErrOutOfRange, "period_start"},
		{"negative tokens", events.TypeTokensSample, set("prompt_tokens", -3), events.ErrOutOfRange, "prompt_tokens"},
		{"unknown server", events.TypeTokensSample, set("server", "ollama?"), events.ErrOutOfRange, "server"},
		{"deadline before notice", events.TypeCapacityReclaimed, set("deadline", "2020-01-01T00:00:00Z"), events.ErrOutOfRange, "deadline"},
		{"bad reclaim kind", events.TypeCapacityReclaimed, set("kind", "vanished"), events.ErrOutOfRange, "kind"},
		{"negative ready", events.TypeReplicaState, set("ready", -1), events.ErrOutOfRange, "ready"},
		{"empty instance id", events.TypeReplicaState, set("instances", []any{"i-0a", ""}), events.ErrMissingField, "instances[1]"},
		{"null instance id", events.TypeReplicaState, set("instances", []any{nil}), events.ErrMissingField, "instances[0]"},
		{"instances not a list", events.TypeReplicaState, set("instances", "i-0a"), events.ErrMalformed, "instances"},
		{"instance id not a string", events.TypeReplicaState, set("instances", []any{7}), events.ErrMalformed, "instances"},
		{"action without reason", events.TypePlanDecided, set("actions", []any{map[string]any{"id": "a", "kind": "launch", "location": "l", "market": "spot", "replicas": 1}}), events.ErrMissingField, "actions[0].reason"},
		{"bad action kind", events.TypeActionUpdated, set("kind", "teleport"), events.ErrOutOfRange, "kind"},
		{"bad status", events.TypeActionUpdated, set("status", "done"), events.ErrOutOfRange, "status"},
		{"bad period", events.TypeBudgetAlert, set("period", "fortnight"), events.ErrOutOfRange, "period"},
		{"negative spend", events.TypeBudgetAlert, set("spend", -1), events.ErrOutOfRange, "spend"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := events.Decode(mutate(t, tt.typ, tt.change))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Decode error = %v, want %v", err, tt.wantErr)
			}
			var ee *events.Error
			if !errors.As(err, &ee) {
				t.Fatalf("error %T is not *events.Error", err)
			}
			if ee.Field != tt.wantField {
				t.Errorf("Field = %q, want %q (error: %v)", ee.Field, tt.wantField, err)
			}
			if tt.wantField != "" && !strings.Contains(err.Error(), tt.wantField) {
				t.Errorf("error %q does not name the field %q", err, tt.wantField)
			}
		})
	}
}

func TestDecodeMalformedDocuments(t *testing.T) {
	for _, in := range []string{"", "null", "[]", "{", `"price.observed"`, "\x00\xff", `{"type":"price.observed"`} {
		if _, err := events.Decode([]byte(in)); err == nil {
			t.Errorf("Decode(%q) succeeded, want an error", in)
		}
	}
}

func TestDecodeAcceptsNewerMinorVersionAndUnknownFields(t *testing.T) {
	data := mutate(t, events.TypeTokensSample, func(m map[string]any) {
		m["version"] = "1.7"
		m["cached_tokens"] = 12
	})
	if _, err := events.Decode(data); err != nil {
		t.Fatalf("Decode: %v", err)
	}
}

func TestEncodeRejectsInvalid(t *testing.T) {
	e := &events.PriceObserved{Meta: events.Meta{At: at}, Provider: "aws"}
	if _, err := events.Encode(e); !errors.Is(err, events.ErrMissingField) {
		t.Fatalf("Encode of an incomplete event: err = %v, want ErrMissingField", err)
	}
	local := &events.GPUSample{Meta: events.Meta{At: at.In(time.FixedZone("CET", 3600))}}
	if _, err := events.Encode(local); !errors.Is(err, events.ErrOutOfRange) {
		t.Fatalf("Encode of a non-UTC time: err = %v, want ErrOutOfRange", err)
	}
}

func FuzzDecode(f *testing.F) {
	for _, e := range eventstest.Samples(at, 1) {
		data, err := events.Encode(e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"type":"gpu.sample","version":"1"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := events.Decode(data)
		if err != nil {
			return
		}
		// Whatever decodes must be valid and must survive a second round trip unchanged.
		again, err := events.Encode(e)
		if err != nil {
			t.Fatalf("decoded event does not encode: %v", err)
		}
		e2, err := events.Decode(again)
		if err != nil {
			t.Fatalf("re-encoded event does not decode: %v\n%s", err, again)
		}
		if e2.Header().ID != e.Header().ID || e2.EventType() != e.EventType() {
			t.Fatalf("second round trip changed the envelope")
		}
	})
}

// TestCodecAllocations: encoding an event allocates only its JSON, and decoding a GPU sample,
// the bulk of the bus's traffic, only the event and its strings (version, id and four labels).
// No per-message maps, raw copies, reflection buffers or field names built in advance.
func TestCodecAllocations(t *testing.T) {
	type test struct {
		name string
		run  func() error
		want float64
	}
	var tests []test
	for _, e := range eventstest.Samples(at, 1) {
		tests = append(tests, test{"encode " + string(e.EventType()),
			func() error { _, err := events.Encode(e); return err }, 1})
		if e.EventType() == events.TypeGPUSample {
			data, err := events.Encode(e)
			if err != nil {
				t.Fatal(err)
			}
			tests = append(tests, test{"decode gpu.sample",
				func() error { _, err := events.Decode(data); return err }, 7})
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			got := testing.AllocsPerRun(100, func() { err = tt.run() })
			if err != nil {
				t.Fatal(err)
			}
			if got > tt.want {
				t.Errorf("%v allocations per event, want at most %v", got, tt.want)
			}
		})
	}
}
