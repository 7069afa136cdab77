package budget

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func validPolicy() Policy {
	p := Policy{Name: "llm-monthly", Scope: Scope{Workload: "llm-inference"}, Period: Month,
		Limit: 50000, Currency: "USD",
		Thresholds: []Threshold{{At: Level{80, true}}, {At: Level{100, true}, On: Forecast},
			{At: Level{100, true}, Action: BlockScaleUp}, {At: Level{120, true}, Action: ScaleToFloor}},
		ApproveOver: 25, Approvers: []string{"U123ABC", "S456DEF"}}
	p.Normalize()
	return p
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name       string
		edit       func(*Policy)
		wantFields []string // fields named in the error, in order; none means valid
	}{
		{"valid", func(*Policy) {}, nil},
		{"bad name", func(p *Policy) { p.Name = "LLM monthly" }, []string{"name"}},
		{"no scope", func(p *Policy) { p.Scope = Scope{} }, []string{"scope"}},
		{"whole estate", func(p *Policy) { p.Scope = Scope{All: true} }, nil},
		{"bad period", func(p *Policy) { p.Period = "year" }, []string{"period"}},
		{"zero limit", func(p *Policy) { p.Limit = 0 }, []string{"limit"}},
		{"currency", func(p *Policy) { p.Currency = "dollars" }, []string{"currency"}},
		{"euro", func(p *Policy) { p.Currency = "EUR" }, []string{"currency"}},
		{"bitcoin", func(p *Policy) { p.Currency = "XBT" }, []string{"currency"}},
		{"no thresholds", func(p *Policy) { p.Thresholds = nil }, []string{"thresholds"}},
		{"zero level", func(p *Policy) { p.Thresholds[0].At = Level{0, true} }, []string{"thresholds[0].at"}},
		{"huge percent", func(p *Policy) { p.Thresholds[0].At = Level{5000, true} }, []string{"thresholds[0].at"}},
		{"bad basis", func(p *Policy) { p.Thresholds[1].On = "guess" }, []string{"thresholds[1].on"}},
		{"bad action", func(p *Policy) { p.Thresholds[2].Action = "panic" }, []string{"thresholds[2].action"}},
		{"repeated threshold", func(p *Policy) { p.Thresholds = append(p.Thresholds, p.Thresholds[0]) }, []string{"thresholds[4]"}},
		{"approval without approvers", func(p *Policy) { p.Approvers = nil }, []string{"approvers"}},
		{"require-approval without approvers", func(p *Policy) {
			p.ApproveOver, p.Approvers = 0, nil
			p.Thresholds = append(p.Thresholds, Threshold{At: Level{90, true}, On: Actual, Action: RequireApproval})
		}, []string{"approvers"}},
		{"bad approver", func(p *Policy) { p.Approvers = []string{"alice"} }, []string{"approvers[0]"}},
		{"negative rate", func(p *Policy) { p.ApproveOver = -1 }, []string{"approve_over"}},
		{"restore ask", func(p *Policy) { p.Restore = RestoreAsk }, nil},
		{"restore unset reads as first", func(p *Policy) { p.Restore = "" }, nil},
		{"restore later", func(p *Policy) { p.Restore = "later" }, []string{"restore"}},
		{"short timeout", func(p *Policy) { p.ApprovalTimeout = Duration(time.Second) }, []string{"approval_timeout"}},
		{"everything at once", func(p *Policy) { p.Limit, p.Period = -1, "" }, []string{"period", "limit"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := validPolicy()
			tt.edit(&p)
			err := p.Validate()
			if tt.wantFields == nil {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			inv, ok := err.(*InvalidError)
			if !ok {
				t.Fatalf("Validate() = %v, want *InvalidError", err)
			}
			var got []string
			for _, pr := range inv.Problems {
				got = append(got, pr.Field)
			}
			if !reflect.DeepEqual(got, tt.wantFields) {
				t.Errorf("fields = %v, want %v (%v)", got, tt.wantFields, err)
			}
		})
	}
}

func TestFlagsPolicy(t *testing.T) {
	f := Flags{Scope: "workload=llm-inference", Period: "month", Limit: 50000, Currency: "usd",
		Alerts: []string{"50%", "80%", "100%"}, ForecastAlerts: []string{"100%"},
		On:          []string{"100%:block-scale-up", "120%:scale-to-floor", "forecast:90%:require-approval"},
		ApproveOver: "25/h", Approvers: []string{"U123ABC", "S456DEF"}, ApprovalTimeout: 30 * time.Minute}
	p, err := f.Policy("llm-monthly")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, th := range p.Thresholds {
		got = append(got, th.Key()+" "+string(th.Action))
	}
	want := []string{"actual:50% notify", "actual:80% notify", "actual:100% notify",
		"actual:100% block-scale-up", "actual:120% scale-to-floor",
		"forecast:90% require-approval", "forecast:100% notify"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("thresholds = %v\nwant %v", got, want)
	}
	if p.Currency != "USD" || p.ApproveOver != 25 || p.Timeout() != 30*time.Minute || p.Restore != RestoreFirst {
		t.Errorf("policy = %+v", p)
	}
	f.Restore = "ask"
	if p, err := f.Policy("llm-monthly"); err != nil || p.Restore != RestoreAsk {
		t.Errorf("--restore ask: policy %+v, err %v", p, err)
	}
	f.Restore = ""

	tests := []struct {
		name    string
		edit    func(*Flags)
		wantErr string
	}{
		{"bad scope", func(f *Flags) { f.Scope = "cluster=x" }, `--scope: scope "cluster=x": unknown key "cluster"`},
		{"bad alert", func(f *Flags) { f.Alerts = []string{"lots"} }, `--alert: "lots" is not a threshold`},
		{"bad on", func(f *Flags) { f.On = []string{"100%"} }, `--on: "100%": want [actual:|forecast:]LEVEL:ACTION`},
		{"bad basis", func(f *Flags) { f.On = []string{"soon:100%:notify"} }, `basis "soon" must be actual or forecast`},
		{"bad rate", func(f *Flags) { f.ApproveOver = "cheap" }, `--approve-over: "cheap" is not a rate`},
		{"bad restore", func(f *Flags) { f.Restore = "later" }, `restore: "later" must be first (a replacement of lost capacity is applied at once`},
		{"bad action", func(f *Flags) { f.On = []string{"100%:shout"} }, `thresholds[4].action: "shout" must be notify`},
		// An amount over ten times the limit is refused as 1000% is: 150 on a limit of 10 was
		// stored as a $150 threshold that could never fire.
		{"amount over the limit", func(f *Flags) { f.Limit, f.Alerts = 10, []string{"150"} },
			`threshold 150 is an amount, 1500% of the limit of 10 (over 1000%, which is refused as a percentage too): write 150%`},
		{"amount over the limit, --on", func(f *Flags) { f.Limit, f.On = 10, []string{"101:block-scale-up"} }, `threshold 101 is an amount`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := f
			tt.edit(&g)
			if _, err := g.Policy("x"); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestPolicyJSONRoundTrip(t *testing.T) {
	p := validPolicy()
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"scope":"workload=llm-inference"`, `"approve_over":"25/h"`, `"at":"120%"`, `"approval_timeout":"30m0s"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("%s lacks %s", data, want)
		}
	}
	var back Policy
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, p) {
		t.Errorf("round trip changed the policy:\n got %+v\nwant %+v", back, p)
	}
}

const policyFile = `# kept in git
name: llm-monthly
scope: workload=llm-inference
period: month
limit: 50000
currency: USD
thresholds:
  - {at: 80%}
  - {at: 100%, on: forecast}
  - at: 100%
    action: block-scale-up
approve_over: 25/h
restore: ask
approvers: [U123ABC]
approval_timeout: 45m
---
- name: search-daily
  scope: team=search,provider=aws
  period: day
  limit: 2000
  currency: usd
  thresholds: [{at: 1500}]
`

func TestParseFile(t *testing.T) {
	ps, err := ParseFile("policy.yaml", []byte(policyFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 {
		t.Fatalf("got %d policies, want 2", len(ps))
	}
	if ps[0].Timeout() != 45*time.Minute || ps[0].Thresholds[1].Action != BlockScaleUp || ps[0].ApproveOver != 25 ||
		ps[0].Restore != RestoreAsk {
		t.Errorf("first policy = %+v", ps[0])
	}
	if ps[1].Scope != (Scope{Team: "search", Provider: "aws"}) || ps[1].Thresholds[0].At != (Level{1500, false}) ||
		ps[1].Restore != RestoreFirst {
		t.Errorf("second policy = %+v", ps[1])
	}
}

func TestParseFileErrorsNameFileLineAndField(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"unknown key", "name: a\nscope: all\nperiod: day\nlimit: 1\ncurrency: USD\nthresholds: [{at: 1}]\ncolour: red\n",
			[]string{`p.yaml:7: colour: unknown key`}},
		{"validation", "name: a\nscope: all\nperiod: year\nlimit: -1\ncurrency: USD\nthresholds:\n  - {at: 80%, action: shout}\n",
			[]string{`p.yaml:3: period: budget policy "a": "year" must be day, week or month`,
				`p.yaml:4: limit: budget policy "a": must be a positive amount`,
				`p.yaml:7: thresholds[0].action: budget policy "a": "shout"`}},
		{"bad value", "name: a\nscope: all\nperiod: day\nlimit: lots\ncurrency: USD\nthresholds: [{at: 1}]\napproval_timeout: soon\n",
			[]string{`p.yaml:4: limit:`, `p.yaml:7: approval_timeout: "soon" is not a duration`}},
		{"bad scope", "name: a\nscope: colour=red\nperiod: day\nlimit: 1\ncurrency: USD\nthresholds: [{at: 1}]\n",
			[]string{`p.yaml:2: scope: scope "colour=red": unknown key "colour"`}},
		{"bad restore", "name: a\nscope: all\nperiod: day\nlimit: 1\ncurrency: USD\nthresholds: [{at: 1}]\nrestore: later\n",
			[]string{`p.yaml:7: restore: budget policy "a": "later" must be first (a replacement of lost capacity is applied at once and the approvers are told after) or ask`}},
		{"restore not a word", "name: a\nscope: all\nperiod: day\nlimit: 1\ncurrency: USD\nthresholds: [{at: 1}]\nrestore: [first]\n",
			[]string{`p.yaml:7: restore:`}},
		{"not a mapping", "just words\n", []string{`p.yaml:1: a budget policy must be a mapping`}},
		{"empty", "", []string{`p.yaml: no budget policy found`}},
		{"broken yaml", "name: [", []string{`p.yaml: yaml:`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseFile("p.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatal("ParseFile accepted it")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\nlacks %q", err, w)
				}
			}
		})
	}
}
