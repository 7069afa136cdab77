package report

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

const okWindow = `"since":"2026-11-30T09:00:00Z","until":"2026-11-30T12:00:00Z","now":"2026-11-30T12:30:00Z"`

func TestDecodeRequestRefusesMalformed(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", ``, "decoding the request"},
		{"not json", `SELECT 1`, "decoding the request"},
		{"array", `[1,2]`, "decoding the request"},
		{"null", `null`, `report ""`},
		{"trailing data", `{"info":true} {"sql":"SELECT 1"}`, "decoding the request"},
		{"sql", `{"sql":"SELECT 1"}`, "SQL is not accepted"},
		{"sql any case", `{"sQl":"SELECT 1"}`, "SQL is not accepted"},
		{"sql beside a report", `{"report":"cost",` + okWindow + `,"sql":"SELECT 1"}`, "SQL is not accepted"},
		{"unknown field", `{"report":"cost",` + okWindow + `,"query":"SELECT 1"}`, `unknown field "query"`},
		{"unknown report", `{"report":"drop",` + okWindow + `}`, `report "drop": want one of cost`},
		{"no window", `{"report":"cost","now":"2026-11-30T12:30:00Z"}`, "since and until are required"},
		{"no now", `{"report":"cost","since":"2026-11-30T09:00:00Z","until":"2026-11-30T12:00:00Z"}`, "now: required"},
		{"window backwards", `{"report":"cost","since":"2026-11-30T12:00:00Z","until":"2026-11-30T09:00:00Z","now":"2026-11-30T12:30:00Z"}`, "until must be after since"},
		{"window too long", `{"report":"cost","since":"2000-01-01T00:00:00Z","until":"2026-11-30T09:00:00Z","now":"2026-11-30T12:30:00Z"}`, "at most"},
		{"bad time", `{"report":"cost","since":"yesterday"}`, "decoding the request"},
		{"bad by", `{"report":"cost",` + okWindow + `,"by":["cluster"]}`, `by: unknown dimension "cluster"`},
		{"bad filter dimension", `{"report":"cost",` + okWindow + `,"filter":{"1=1":["x"]}}`, `filter: unknown dimension "1=1"`},
		{"empty filter", `{"report":"cost",` + okWindow + `,"filter":{"provider":[]}}`, "filter provider: no values"},
		{"filter not a list", `{"report":"cost",` + okWindow + `,"filter":{"provider":"aws"}}`, "decoding the request"},
		{"too many filter values", `{"report":"cost",` + okWindow + `,"filter":{"provider":[` + strings.Repeat(`"a",`, maxFilterValues) + `"a"]}}`, "at most 1000"},
		{"negative threshold", `{"report":"idle",` + okWindow + `,"threshold":-1}`, "threshold -1: want 0 to 100"},
		{"discount over 1", `{"report":"commitments",` + okWindow + `,"discount":2}`, "discount 2: want 0 to 1"},
		{"negative gap", `{"report":"idle",` + okWindow + `,"max_gap":-5}`, "max_gap"},
		{"invalid policy", `{"report":"budget","now":"2026-11-30T12:30:00Z","policies":[{"name":"Bad Name"}]}`, "budget policy"},
		{"empty job name", `{"report":"jobs",` + okWindow + `,"jobs":["ft-a",""]}`, "jobs: an empty name"},
		{"too many teams", `{"report":"jobs",` + okWindow + `,"teams":[` + strings.Repeat(`"a",`, maxFilterValues) + `"a"]}`, "teams: 1001 values, at most 1000"},
		{"jobs not a list", `{"report":"jobs",` + okWindow + `,"jobs":"ft-a"}`, "decoding the request"},
		{"by on decisions", `{"report":"decisions",` + okWindow + `,"by":["workload"]}`, "by: decisions has one row per plan"},
		{"by on fleet", `{"report":"fleet",` + okWindow + `,"by":["gpu"]}`, "by: fleet has one row per"},
		{"plan on fleet", `{"report":"fleet",` + okWindow + `,"plan":"abc"}`, "plan: only decisions and holds"},
		{"plan with a quote", `{"report":"decisions",` + okWindow + `,"plan":"a' OR 1=1"}`, "plan \"a' OR 1=1\": want a plan id"},
		{"plan too long", `{"report":"holds",` + okWindow + `,"plan":"` + strings.Repeat("a", 65) + `"}`, "at most 64"},
		{"plan not a string", `{"report":"holds",` + okWindow + `,"plan":1}`, "decoding the request"},
		{"gpu filter on decisions", `{"report":"decisions",` + okWindow + `,"filter":{"gpu":["H100-80GB"]}}`, "a plan's actions name no GPU type"},
		{"holds filter dimension", `{"report":"holds",` + okWindow + `,"filter":{"plan":["x"]}}`, `filter: unknown dimension "plan"`},
		{"too big", `{"report":"` + strings.Repeat("x", maxRequestBytes) + `"}`, "at most"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeRequest([]byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("DecodeRequest(%.80q) = %v, want an error containing %q", tt.in, err, tt.want)
			}
		})
	}
}

func TestDecodeRequestAcceptsWhatClientsSend(t *testing.T) {
	for _, req := range requests(t) {
		b, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeRequest(b)
		if err != nil {
			t.Errorf("%s: %v", req.Report, err)
			continue
		}
		if !reflect.DeepEqual(got, req) {
			t.Errorf("%s: decoded\n%#v\nsent\n%#v", req.Report, got, req)
		}
	}
	if r, err := DecodeRequest([]byte(`{"info":true}`)); err != nil || !r.Info {
		t.Errorf("info request: %+v, %v", r, err)
	}
}

// FuzzDecodeRequest: whatever arrives, a request carrying SQL is never accepted, and an accepted
// request is valid and survives being sent again.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{`{"info":true}`, `{"sql":"SELECT 1"}`, `{"report":"cost",` + okWindow + `,"by":["workload"],"filter":{"provider":["aws"]}}`,
		`{"report":"idle",` + okWindow + `,"threshold":10,"max_gap":60000000000}`, `{"report":"budget","now":"2026-11-30T12:30:00Z"}`,
		`{"report":"jobs",` + okWindow + `,"jobs":["ft-a"],"teams":["research",""]}`,
		`{"report":"decisions",` + okWindow + `,"plan":"9f3a0c1d2e4b5a6c","filter":{"workload":["chat"]}}`,
		`{"report":"holds",` + okWindow + `,"plan":"x y"}`, `{"report":"fleet",` + okWindow + `,"by":["gpu"]}`, `null`, `{"Sql":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeRequest(data)
		if err != nil {
			return
		}
		var fields map[string]json.RawMessage
		_ = json.Unmarshal(data, &fields)
		for k := range fields {
			if strings.EqualFold(k, "sql") {
				t.Fatalf("accepted a request with SQL: %q", data)
			}
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("accepted an invalid request %q: %v", data, err)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("re-encoding %q: %v", data, err)
		}
		if _, err := DecodeRequest(b); err != nil {
			t.Fatalf("%q decoded, but its re-encoding %s does not: %v", data, b, err)
		}
	})
}
