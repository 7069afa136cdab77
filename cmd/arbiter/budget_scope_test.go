package main

import (
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/bus"
)

// TestBudgetSetWarnsOfScopeAndRefusesCurrency: `budget set` stores a policy whose scope names no
// workload of the fleet file, with a warning on stderr, and refuses a limit in another currency.
func TestBudgetSetWarnsOfScopeAndRefusesCurrency(t *testing.T) {
	env := startBudgetBus(t)
	serveBudgetWrites(t, env.Env)
	set := func(scope, currency string) (string, error) {
		return env.cli(t, bus.RoleBudget, "budget", "set", "p", "--fleet", "../../examples/bursar.yaml",
			"--scope", scope, "--period", "day", "--limit", "100", "--currency", currency, "--alert", "80%")
	}
	tests := []struct {
		name, scope, currency string
		wantErr, wantWarn     string // substrings; "" for none
	}{
		{"a workload of the fleet", "workload=chat-llama-8b", "USD", "", ""},
		{"a typo", "workload=chat-lama-8b", "USD", "", `warning: budget "p": scope workload=chat-lama-8b matches no workload`},
		{"euros", "workload=chat-llama-8b", "EUR", "are in USD", ""},
		{"bitcoin", "workload=chat-llama-8b", "XBT", "are in USD", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := set(tt.scope, tt.currency)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("err = %v\n%s", err, out)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
			if has := strings.Contains(out, "warning:"); has != (tt.wantWarn != "") || !strings.Contains(out, tt.wantWarn) {
				t.Errorf("output %q, want warning %q", out, tt.wantWarn)
			}
		})
	}
}
