package report

import (
	"strings"
	"testing"
	"time"
)

// TestBasisBilled: with the fixtures imported, --basis billed puts each workload's billed
// EffectiveCost where charges were matched to it, and the estimate elsewhere, and says which.
func TestBasisBilled(t *testing.T) {
	st := billedHistory(t)
	importFiles(t, st, at("00:00").Add(48*time.Hour), awsExport, azureExport, gcpExport)
	tests := []struct {
		name  string
		basis string
		by    []Dim
		want  []string
	}{
		{
			// Estimated: 983.20, 392.00 ... as seeded.
			name: "estimated", basis: BasisEstimated, by: []Dim{Workload, Location},
			want: []string{"batch lambda-tx basis=estimated usd=10", "chat aws-use1 basis=estimated usd=983.2",
				"chat azure-eus basis=estimated usd=392", "embed aws-use1 basis=estimated usd=96", "eu-chat gcp-euw4 basis=estimated usd=180"},
		},
		{
			// Billed: chat at aws-use1 is its reserved instance's 550.00 effective, at azure-eus
			// 352.80; embed 96.80; eu-chat 189.00; batch has no billing, so 10.00 estimated.
			name: "billed", basis: BasisBilled, by: []Dim{Workload, Location},
			want: []string{"batch lambda-tx basis=estimated usd=10", "chat aws-use1 basis=billed usd=550",
				"chat azure-eus basis=billed usd=352.8", "embed aws-use1 basis=billed usd=96.8", "eu-chat gcp-euw4 basis=billed usd=189"},
		},
		{
			// One row over everything: 550 + 352.80 + 96.80 + 189 + 10 = 1198.60, from both bases.
			name: "billed, all", basis: BasisBilled,
			want: []string{"basis=mixed usd=1198.6"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := nov30(tt.by...)
			o.Basis = tt.basis
			res, err := Cost(ctxT(t), st, o)
			if err != nil {
				t.Fatal(err)
			}
			if g := got(res, "basis", "usd"); strings.Join(g, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(g, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestTokensOnBilledCost: chat at aws-use1 served 100M tokens; estimated they cost 983.20
// (9.832 per million), billed 550.00 effective under the reserved instance (5.50 per million).
func TestTokensOnBilledCost(t *testing.T) {
	st := billedHistory(t)
	importFiles(t, st, at("00:00").Add(48*time.Hour), awsExport, azureExport, gcpExport)
	for _, tt := range []struct {
		basis string
		want  string
	}{
		{BasisEstimated, "chat aws-use1 tokens=100000000 usd=983.2 usd_per_m_tokens=9.832 basis=estimated"},
		{BasisBilled, "chat aws-use1 tokens=100000000 usd=550 usd_per_m_tokens=5.5 basis=billed"},
	} {
		o := nov30(Workload, Location)
		o.Basis = tt.basis
		o.Filter = Filter{Location: {"aws-use1"}, Workload: {"chat"}}
		res, err := Tokens(ctxT(t), st, TokenOptions{Options: o})
		if err != nil {
			t.Fatal(err)
		}
		if g := got(res, "tokens", "usd", "usd_per_m_tokens", "basis"); len(g) != 1 || g[0] != tt.want {
			t.Errorf("%s: got %v, want %s", tt.basis, g, tt.want)
		}
	}
}

func TestSavingsSaysItsBasis(t *testing.T) {
	st := billedHistory(t)
	importFiles(t, st, at("00:00").Add(48*time.Hour), azureExport)
	o := nov30(Location)
	o.Basis = BasisBilled
	res, err := Savings(ctxT(t), st, o)
	if err != nil {
		t.Fatal(err)
	}
	want := "aws-use1 usd=1079.2 basis=estimated\nazure-eus usd=352.8 basis=billed\ngcp-euw4 usd=180 basis=estimated\nlambda-tx usd=10 basis=estimated"
	if g := strings.Join(got(res, "usd", "basis"), "\n"); g != want {
		t.Errorf("got\n%s\nwant\n%s", g, want)
	}
}

func TestParseBasis(t *testing.T) {
	for in, want := range map[string]string{"": BasisEstimated, "estimated": BasisEstimated, "billed": BasisBilled, "invoice": ""} {
		got, err := ParseBasis(in)
		if got != want || (err != nil) != (want == "") {
			t.Errorf("ParseBasis(%q) = %q, %v", in, got, err)
		}
	}
	r := NewRequest("cost", Options{Window: nov30().Window, Now: at("12:00"), Basis: "invoice"})
	if err := r.Validate(); err == nil || !strings.Contains(err.Error(), "basis") {
		t.Errorf("a request with basis invoice: %v", err)
	}
}
