package budget

import (
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/fleet"
)

// TestCurrencyMustBeUSD: spend is in USD and nothing converts it, so a limit in another currency
// is refused where it is written (flags and files, naming the line), and USD is the default.
func TestCurrencyMustBeUSD(t *testing.T) {
	for _, cur := range []string{"EUR", "xbt"} {
		_, err := Flags{Scope: "all", Period: "day", Limit: 10, Currency: cur, Alerts: []string{"80%"}}.Policy("p")
		if err == nil || !strings.Contains(err.Error(), "currency") || !strings.Contains(err.Error(), "USD") {
			t.Errorf("--currency %s: err = %v, want a currency error saying USD", cur, err)
		}
	}
	_, err := ParseFile("b.yaml", []byte("name: p\nscope: all\nperiod: day\nlimit: 10\ncurrency: EUR\nthresholds: [{at: 80%}]\n"))
	if err == nil || !strings.Contains(err.Error(), "b.yaml:5: currency") {
		t.Errorf("a file in EUR: err = %v, want one naming b.yaml:5 and currency", err)
	}
	ps, err := ParseFile("b.yaml", []byte("name: p\nscope: all\nperiod: day\nlimit: 10\nthresholds: [{at: 80%}]\n"))
	if err != nil || ps[0].Currency != "USD" {
		t.Errorf("no currency given: %v, %v; want USD", ps, err)
	}
}

// TestWarnings: a scope that matches no workload of the fleet, or a stored policy in another
// currency, is valid but warned of.
func TestWarnings(t *testing.T) {
	cfg := &fleet.Config{
		Locations: []fleet.Location{{Name: "aws-use1", Provider: "aws"}, {Name: "gcp-euw4", Provider: "gcp"}},
		Workloads: []fleet.Workload{{Name: "chat", Team: "assistants"}, {Name: "embed", Team: "search"}},
	}
	tests := []struct {
		name     string
		scope    string
		currency string
		cfg      *fleet.Config
		want     []string // substrings, one per warning
	}{
		{"a workload of the fleet", "workload=chat", "USD", cfg, nil},
		{"a team and provider that meet", "team=search,provider=gcp", "USD", cfg, nil},
		{"all", "all", "USD", cfg, nil},
		{"a workload typo", "workload=caht", "USD", cfg, []string{"scope workload=caht matches no workload of the fleet file (workloads: chat, embed)"}},
		{"an unknown team", "team=research", "USD", cfg, []string{"scope team=research matches no workload"}},
		{"a location no workload can use", "location=azure-east", "USD", cfg, []string{"matches no workload"}},
		{"no fleet known", "workload=caht", "USD", nil, nil},
		{"stored in euros", "workload=chat", "EUR", cfg, []string{"its limit is in EUR, but spend is in USD"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc, err := ParseScope(tt.scope)
			if err != nil {
				t.Fatal(err)
			}
			got := Warnings(Policy{Name: "p", Scope: sc, Currency: tt.currency}, tt.cfg)
			if len(got) != len(tt.want) {
				t.Fatalf("warnings = %q, want %d", got, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("warning %q does not contain %q", got[i], w)
				}
			}
		})
	}
}
