package placementtest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/placement"
)

// Lines renders a decision in the scenario files' plan syntax, one canonical line per action,
// sorted, then the cost line.
func Lines(d placement.Decision) []string {
	var out []string
	for _, a := range d.Actions {
		var l string
		switch a.Kind {
		case placement.ActionLaunch:
			l = fmt.Sprintf("launch %s %s %d %s", a.Workload, a.Offer, a.Count, a.Reason)
		case placement.ActionDrain:
			l = fmt.Sprintf("drain %s %s %s %s", a.Workload, a.Offer, strings.Join(a.Replicas, ","), a.Reason)
		case placement.ActionScale:
			l = fmt.Sprintf("scale %s %d %s", a.Workload, a.Count, a.Reason)
		}
		if a.NeedsApproval {
			l += " approval"
		}
		out = append(out, l)
	}
	slices.Sort(out)
	return append(out, fmt.Sprintf("cost %.2f -> %.2f", d.CostPerHourBefore, d.CostPerHourAfter))
}

// Check runs the scenario and returns the differences between the plan it wants and the one the
// planner made, empty when they agree. Without a cost line in the scenario the cost is not
// compared.
func Check(sc Scenario) []string {
	got := Lines(placement.Plan(sc.Snapshot, sc.Policy, sc.Now))
	want := slices.Clone(sc.Want)
	if !slices.ContainsFunc(want, func(l string) bool { return strings.HasPrefix(l, "cost ") }) {
		got = got[:len(got)-1]
	}
	slices.Sort(want)
	slices.Sort(got)
	var diff []string
	for _, l := range want {
		if !slices.Contains(got, l) {
			diff = append(diff, "missing: "+l)
		}
	}
	for _, l := range got {
		if !slices.Contains(want, l) {
			diff = append(diff, "unexpected: "+l)
		}
	}
	return diff
}

// RunDir runs every *.scenario file under dir as a subtest.
func RunDir(t *testing.T, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.scenario"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no *.scenario files in %s", dir)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".scenario"), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			sc, err := Parse(f, strings.NewReader(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			if diff := Check(sc); len(diff) > 0 {
				t.Errorf("%s: plan differs:\n  %s\ngot:\n  %s", f, strings.Join(diff, "\n  "),
					strings.Join(Lines(placement.Plan(sc.Snapshot, sc.Policy, sc.Now)), "\n  "))
			}
		})
	}
}
