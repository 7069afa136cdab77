package fleet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWebhookSecret: a webhook location's signing secret is read from its variable or file; a
// missing one names the location and the variable, a short one is refused, and no error shows
// the secret.
func TestWebhookSecret(t *testing.T) {
	dir := t.TempDir()
	file := func(content string) string {
		p := filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+content[:min(len(content), 3)])
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const good = "0123456789abcdef0123"
	tests := []struct {
		name     string
		env      map[string]string
		secEnv   string
		secFile  string
		want     string
		wantErrs []string
	}{
		{name: "from the variable", env: map[string]string{"HOOK": good}, secEnv: "HOOK", want: good},
		{name: "variable trimmed", env: map[string]string{"HOOK": " " + good + "\n"}, secEnv: "HOOK", want: good},
		{name: "from the file", secFile: file(good + "\n"), want: good},
		{name: "variable wins over the file", env: map[string]string{"HOOK": good}, secEnv: "HOOK", secFile: file("file-secret-long-enough"), want: good},
		{name: "unset variable falls back to the file", secEnv: "HOOK", secFile: file("file-secret-long-enough"), want: "file-secret-long-enough"},
		{name: "variable unset", secEnv: "HOOK", wantErrs: []string{"location gpu-hook", "HOOK", "missing"}},
		{name: "variable empty", env: map[string]string{"HOOK": "  "}, secEnv: "HOOK", wantErrs: []string{"HOOK", "missing"}},
		{name: "one character", env: map[string]string{"HOOK": "Q"}, secEnv: "HOOK", wantErrs: []string{"location gpu-hook", "HOOK", "shorter than 16 bytes"}},
		{name: "fifteen bytes", env: map[string]string{"HOOK": "0123456789abcde"}, secEnv: "HOOK", wantErrs: []string{"shorter than 16"}},
		{name: "sixteen bytes", env: map[string]string{"HOOK": "0123456789abcdef"}, secEnv: "HOOK", want: "0123456789abcdef"},
		{name: "empty file", secFile: file("\n"), wantErrs: []string{"missing", "is empty"}},
		{name: "no file", secFile: filepath.Join(dir, "nope"), wantErrs: []string{"location gpu-hook", "nope"}},
		{name: "short file", secFile: file("abc"), wantErrs: []string{"shorter than 16", "file "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := Location{Name: "gpu-hook", Actuator: Actuator{Kind: KindWebhook, URL: "https://hooks.example/scale",
				SecretEnv: tt.secEnv, SecretFile: tt.secFile}}
			lookup := func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }
			got, err := l.WebhookSecret(lookup)
			if len(tt.wantErrs) == 0 {
				if err != nil || string(got) != tt.want {
					t.Fatalf("WebhookSecret() = %q, %v; want %q", got, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("WebhookSecret() = %q, want an error", got)
			}
			for _, w := range tt.wantErrs {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v, want it to contain %q", err, w)
				}
			}
			for _, v := range tt.env {
				if strings.TrimSpace(v) != "" && strings.Contains(err.Error(), strings.TrimSpace(v)) {
					t.Errorf("err shows the secret: %v", err)
				}
			}
			cfg := &Config{Locations: []Location{{Name: "sim-a", Actuator: Actuator{Kind: KindSim}}, l}}
			if err := cfg.CheckSecrets(lookup); err == nil || !strings.Contains(err.Error(), "gpu-hook") {
				t.Errorf("CheckSecrets() = %v, want the location named", err)
			}
		})
	}
}
