package budget

import (
	"slices"
	"strings"
	"testing"
)

const remedyBase = "name: r\nscope: workload=svc\nperiod: day\nlimit: 100\nthresholds: [{at: 80%}]\n"

func TestParseFileRemedies(t *testing.T) {
	tests := []struct {
		name    string
		extra   string
		want    []Remedy
		wantErr string // a part of the error; empty: valid
	}{
		{"none", "", nil, ""},
		{"fallback", "approvers: [U0APPROVER]\nremedies: [fallback]\n", []Remedy{RemedyFallback}, ""},
		{"block list", "approvers: [U0APPROVER]\nremedies:\n  - fallback\n", []Remedy{RemedyFallback}, ""},
		{"unknown", "approvers: [U0APPROVER]\nremedies: [scale-down]\n", nil, `policy.yaml:7: remedies[0]: budget policy "r": "scale-down" is not a remedy`},
		{"repeated", "approvers: [U0APPROVER]\nremedies: [fallback, fallback]\n", nil, "remedies[1]: budget policy \"r\": repeats fallback"},
		{"no approvers", "remedies: [fallback]\n", nil, "policy.yaml:1: approvers: budget policy \"r\": required when remedies are proposed"},
		{"not a list", "approvers: [U0APPROVER]\nremedies: fallback\n", nil, "policy.yaml:7: remedies:"},
		{"a mapping", "approvers: [U0APPROVER]\nremedies: {fallback: true}\n", nil, "policy.yaml:7: remedies:"},
		{"misspelled key", "approvers: [U0APPROVER]\nremedy: [fallback]\n", nil, "policy.yaml:7: remedy: unknown key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps, err := ParseFile("policy.yaml", []byte(remedyBase+tt.extra))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ps[0].Remedies, tt.want) {
				t.Errorf("remedies %v, want %v", ps[0].Remedies, tt.want)
			}
		})
	}
}

func TestFlagsRemedy(t *testing.T) {
	tests := []struct {
		name    string
		flags   []string
		appr    []string
		want    []Remedy
		wantErr string
	}{
		{"none", nil, nil, nil, ""},
		{"fallback", []string{"fallback"}, []string{"U0APPROVER"}, []Remedy{RemedyFallback}, ""},
		{"unknown", []string{"spot"}, []string{"U0APPROVER"}, nil, `--remedy: "spot" is not a remedy`},
		{"empty", []string{""}, []string{"U0APPROVER"}, nil, `--remedy: "" is not a remedy`},
		{"repeated", []string{"fallback,fallback"}, []string{"U0APPROVER"}, nil, "remedies[1]: repeats fallback"},
		{"no approvers", []string{"fallback"}, nil, nil, "approvers: required when remedies are proposed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Flags{Scope: "workload=svc", Period: "day", Limit: 100, Alerts: []string{"80%"}, Remedies: tt.flags, Approvers: tt.appr}
			p, err := f.Policy("r")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p.Remedies, tt.want) || p.Wants(RemedyFallback) != (len(tt.want) > 0) {
				t.Errorf("remedies %v, want %v", p.Remedies, tt.want)
			}
		})
	}
}

// FuzzParseRemedies: the flag's parser never panics, and what it accepts is a known remedy.
func FuzzParseRemedies(f *testing.F) {
	for _, s := range []string{"fallback", "fallback,fallback", "", ",", " fallback ", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rs, err := ParseRemedies([]string{s})
		if err != nil {
			return
		}
		for _, r := range rs {
			if !slices.Contains(remedies, r) {
				t.Fatalf("accepted %q", r)
			}
		}
	})
}
