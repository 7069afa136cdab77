package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/store/storetest"
)

// TestReconcileMatchesTheInstancesRunningNow: a replica still running (no sample after it) holds
// the instances of its latest sample up to now. At 10:00, chat has run on i-0p5aaaa and embed on
// i-0p4dbbbb since 00:00: the window's share of the reserved instance's charge, 550 x 10/24 =
// 229.17, is chat's by resource id, and that of the p4d charge tagged chat, 96.80 x 10/24 = 40.33,
// embed's.
func TestReconcileMatchesTheInstancesRunningNow(t *testing.T) {
	st := storetest.New(t)
	seedHeldReplicas(t, st, heldInstances,
		replicaSample{"00:00", "chat", "aws-use1", "aws", "on_demand", "aws-use1/us-east-1a/p5.48xlarge/on_demand", "H100-80GB", 8, 1, 98.32},
		replicaSample{"00:00", "embed", "aws-use1", "aws", "spot", "aws-use1/us-east-1b/p4d.24xlarge/spot", "A100-40GB", 8, 1, 12},
	)
	importFiles(t, st, at("10:00"), awsExport)
	o := nov30()
	o.Window.Until, o.Now = at("10:00"), at("10:00")
	res, err := Reconcile(ctxT(t), st, o)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range res.Rows {
		causes := r["causes"].(string)
		got[r["workload"].(string)] = fmt.Sprintf("%.2f %s", r["effective_cost"], strings.TrimSpace(causes[strings.LastIndex(causes, ";")+1:]))
	}
	for w, want := range map[string]string{"chat": "229.17 matched by resource id", "embed": "40.33 matched by resource id"} {
		if got[w] != want {
			t.Errorf("%s: %q, want %q", w, got[w], want)
		}
	}
}

// TestBilledInAnotherCurrencyIsRefused: the GCP export billed in EUR cannot be put beside USD
// estimates: reconcile and --basis billed say which file, account and period, in what currency,
// and what to do; --basis estimated still works. Exporting the period again in USD and importing
// it, as the error says, replaces the EUR export.
func TestBilledInAnotherCurrencyIsRefused(t *testing.T) {
	st := billedHistory(t)
	usd, err := os.ReadFile(gcpExport)
	if err != nil {
		t.Fatal(err)
	}
	eur := filepath.Join(t.TempDir(), "gcp-focus-2026-11-eur.csv")
	if err := os.WriteFile(eur, []byte(strings.ReplaceAll(string(usd), ",USD,", ",EUR,")), 0o644); err != nil {
		t.Fatal(err)
	}
	importFiles(t, st, at("00:00").Add(48*time.Hour), awsExport, eur)
	want := eur + " (gcp billing account 0123AB-CDEF45-678901, period 2026-11) is billed in EUR"
	billed := nov30(Workload)
	billed.Basis = BasisBilled
	for name, run := range map[string]func() error{
		"reconcile":      func() error { _, err := Reconcile(ctxT(t), st, nov30()); return err },
		"cost, billed":   func() error { _, err := Cost(ctxT(t), st, billed); return err },
		"tokens, billed": func() error { _, err := Tokens(ctxT(t), st, TokenOptions{Options: billed}); return err },
	} {
		err := run()
		if !errors.Is(err, ErrCurrency) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "export that billing period in USD") {
			t.Errorf("%s: error %v, want ErrCurrency naming %q and what to do", name, err, want)
		}
	}
	if _, err := Cost(ctxT(t), st, nov30(Workload)); err != nil {
		t.Errorf("cost on the estimated basis: %v", err)
	}
	importFiles(t, st, at("00:00").Add(72*time.Hour), gcpExport)
	if got := strings.Join(reconcileRows(t, st), "\n"); !strings.Contains(got, "gcp-euw4 eu-chat 180.00 189.00 189.00 9.00") {
		t.Errorf("after the USD export replaced the EUR one:\n%s", got)
	}
}
