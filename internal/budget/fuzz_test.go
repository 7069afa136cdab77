package budget

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzParseFile feeds the policy file parser arbitrary bytes: it must not panic, and whatever it
// accepts must be valid and survive the JSON form the store keeps.
func FuzzParseFile(f *testing.F) {
	f.Add([]byte(policyFile))
	f.Add([]byte("name: a\nscope: all\nperiod: day\nlimit: 1\ncurrency: usd\nthresholds: [{at: 1%}]\n"))
	f.Add([]byte("- {name: x, scope: 'team=a,provider=b', period: week, limit: 1e3, currency: EUR, thresholds: [{at: 5, on: forecast, action: notify}], approve_over: 1/h, approvers: [U12]}"))
	f.Add([]byte("thresholds: {at: 1}\n"))
	f.Add([]byte("name: a\nscope: all\nperiod: day\nlimit: 1\nthresholds: [{at: 1}]\napprove_over: 1/h\napprovers: [U12]\nrestore: ask\n"))
	f.Add([]byte("name: a\nscope: all\nperiod: day\nlimit: 1\nthresholds: [{at: 1}]\napprovers: [U12]\nremedies: [fallback]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ps, err := ParseFile("fuzz.yaml", data)
		if err != nil {
			return
		}
		for _, p := range ps {
			if err := p.Validate(); err != nil {
				t.Fatalf("accepted an invalid policy: %v", err)
			}
			raw, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			var back Policy
			if err := json.Unmarshal(raw, &back); err != nil {
				t.Fatalf("stored form does not read back: %v\n%s", err, raw)
			}
			if !reflect.DeepEqual(back, p) {
				t.Fatalf("stored form changed the policy:\n got %+v\nwant %+v", back, p)
			}
		}
	})
}
