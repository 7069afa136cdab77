package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const hookFleet = `locations:
  - {name: gpu-hook, provider: lambda, region: us-east-1, actuator: {kind: webhook, url: "https://hooks.example/scale", secret_env: TEST_HOOK_SECRET}}
workloads:
  - name: svc
    gpu: {models: [H100-80GB], count: 1}
    replicas: {min: 1, max: 1}
    markets: [on_demand]
`

// TestConfigCheckReadsWebhookSecrets: config check said ok for a webhook whose secret variable
// was unset, and for a one-character secret; arbiter run then failed, or signed with it.
func TestConfigCheckReadsWebhookSecrets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bursar.yaml")
	if err := os.WriteFile(path, []byte(hookFleet), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		secret  string // "" leaves the variable unset
		wantErr string
	}{
		{name: "unset", wantErr: "location gpu-hook: its webhook signing secret is missing: set the environment variable TEST_HOOK_SECRET"},
		{name: "one character", secret: "Q", wantErr: "shorter than 16 bytes"},
		{name: "long enough", secret: "a-good-long-signing-secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.secret != "" {
				t.Setenv("TEST_HOOK_SECRET", tt.secret)
			}
			var out bytes.Buffer
			cmd := root()
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			cmd.SetArgs([]string{"config", "check", path})
			err := cmd.Execute()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("config check = %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("config check = %v (printed %q), want an error containing %q", err, out.String(), tt.wantErr)
			case tt.wantErr == "" && !strings.Contains(out.String(), "ok"):
				t.Errorf("config check printed %q, want ok", out.String())
			}
		})
	}
}
