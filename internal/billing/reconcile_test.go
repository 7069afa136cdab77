package billing

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// testLocator is a fleet of four locations: aws-use1 (us-east-1a/b, sub-account 444455556666),
// aws-usw2, azure-eus and gcp-euw4, and the workloads chat, embed and eu-chat.
type testLocator struct{}

func (testLocator) Locate(c Charge) (string, bool) {
	type loc struct{ name, provider, region, account string }
	var found []string
	for _, l := range []loc{{"aws-use1", "aws", "us-east-1", "444455556666"}, {"aws-usw2", "aws", "us-west-2", "777788889999"},
		{"azure-eus", "azure", "eastus", ""}, {"gcp-euw4", "gcp", "europe-west4", ""}} {
		if ProviderKey(c.Provider) == l.provider && (c.Region == "" || c.Region == l.region) &&
			(l.account == "" || l.account == c.SubAccountID) {
			found = append(found, l.name)
		}
	}
	if len(found) != 1 {
		return "", false
	}
	return found[0], true
}

func (testLocator) Workload(name string) bool {
	return slices.Contains([]string{"chat", "embed", "eu-chat"}, name)
}

// hours are n hourly estimates of usd each from 00:00 on Nov 30.
func hours(workload, location, instanceType string, n int, usd float64) []Estimate {
	var out []Estimate
	for i := range n {
		out = append(out, Estimate{workload, location, instanceType, time.Date(2026, 11, 30, i, 0, 0, 0, time.UTC), usd})
	}
	return out
}

// fixtureCharges parses the three hand-written exports.
func fixtureCharges(t *testing.T) []Charge {
	var cs []Charge
	for _, f := range fixtures {
		ex, err := ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, ex.Charges...)
	}
	return cs
}

// fixtureEstimates is what Bursar estimated on Nov 30 for the fixtures' workloads:
// chat on an on-demand p5 at aws-use1, 10 h x 98.32 = 983.20; embed on a spot p4d there,
// 8 h x 12.00 = 96.00; chat on an ND96isr H100 v5 at azure-eus, 4 h x 98.00 = 392.00; eu-chat on
// a spot a3-highgpu-8g at gcp-euw4, 6 h x 30.00 = 180.00.
func fixtureEstimates() []Estimate {
	return slices.Concat(hours("chat", "aws-use1", "p5.48xlarge", 10, 98.32), hours("embed", "aws-use1", "p4d.24xlarge", 8, 12),
		hours("chat", "azure-eus", "Standard_ND96isr_H100_v5", 4, 98), hours("eu-chat", "gcp-euw4", "a3-highgpu-8g", 6, 30))
}

// fixtureHoldings is what the actuators named on Nov 30: chat's p5 at aws-use1 ran on
// i-0p5aaaa from 00:00 to 10:00 and embed's p4d on i-0p4dbbbb (a Kubernetes providerID) from
// 00:00 to 08:00; eu-chat's a3 at gcp-euw4 on the VM eu-chat-0 (a GKE node's providerID) from
// 00:00 to 06:00. azure-eus's history is from before instances were recorded: it names none.
func fixtureHoldings() []Holding {
	d := func(h int) time.Time { return time.Date(2026, 11, 30, h, 0, 0, 0, time.UTC) }
	return []Holding{
		{"chat", "aws-use1", "aws", "i-0p5aaaa", d(0), d(10)},
		{"embed", "aws-use1", "aws", "aws:///us-east-1b/i-0p4dbbbb", d(0), d(8)},
		{"eu-chat", "gcp-euw4", "gcp", "gce://bursar-eu/europe-west4-a/eu-chat-0", d(0), d(6)},
	}
}

// TestReconcileFixtures reconciles the fixtures to the cent, with the instances the replicas ran
// on and without (history recorded before replica.state named them). By hand, per line on
// Nov 30 (estimated / billed / effective / difference = effective - estimated / commitment).
//
// With the instances:
//
//	aws-use1 (credits)            0 / -50 / -50 / -50                 the promotional credit
//	aws-use1 (unmatched)          0 / 318.96 / 318.96 / +318.96       g5.xlarge i-0g5cccc, 24 h x 1.00 = 24.00, and
//	                                                                  p5 i-0p5eeee, 3 h x 98.32 = 294.96: no replica
//	                                                                  ran on either (chat's p5 hours named i-0p5aaaa)
//	aws-use1 (unused commitment)  0 / 0 / 110 / +110 / +110            2 unused RI hours x 55.00, 110 - 0
//	aws-use1 chat           983.20 / 0 / 550 / -433.20 / -433.20       RI on i-0p5aaaa: 10 h x 55.00 effective,
//	                                                                  983.20 contracted; by resource id
//	aws-use1 embed           96.00 / 96.80 / 96.80 / +0.80             spot on i-0p4dbbbb at 12.10 against 12.00, 8 h;
//	                                                                  tagged chat, but embed held the instance: by id
//	aws/* (tax)                   0 / 30 / 30 / +30                    no region; the payer account is no location's
//	aws/us-west-1 (unmatched)     0 / 491.60 / 491.60 / +491.60        5 h x 98.32 where no location is
//	azure-eus chat          392.00 / 352.80 / 352.80 / -39.20          negotiated 88.20 against 98.00, 4 h; by tag
//	gcp-euw4 eu-chat        180.00 / 189.00 / 189.00 / +9.00           spot at 31.50 against 30.00, 6 h; by resource id
//
// Without them, the p4d charge goes by its tag to chat, and the p5 of i-0p5eeee is shared, by
// location and SKU, with the only p5 there, chat's:
//
//	aws-use1 (unmatched)          0 / 24 / 24 / +24                   the g5 alone
//	aws-use1 chat           983.20 / 391.76 / 941.76 / -41.44 / -433.20  billed 0 + 96.80 + 294.96; effective 550 +
//	                                                                  96.80 + 294.96; 941.76 - 983.20
//	aws-use1 embed           96.00 / 0 / 0 / -96.00                    no charge reached it
//	gcp-euw4 eu-chat        180.00 / 189.00 / 189.00 / +9.00           by location and SKU
func TestReconcileFixtures(t *testing.T) {
	tests := []struct {
		name        string
		held        []Holding
		want        []string
		wantMatched Matched
	}{
		{
			name: "by resource id", held: fixtureHoldings(),
			want: []string{
				"aws-use1 (credits) 0.00 -50.00 -50.00 -50.00 0.00",
				"aws-use1 (unmatched) 0.00 318.96 318.96 318.96 0.00",
				"aws-use1 (unused commitment) 0.00 0.00 110.00 110.00 110.00",
				"aws-use1 chat 983.20 0.00 550.00 -433.20 -433.20 resource",
				"aws-use1 embed 96.00 96.80 96.80 0.80 0.00 resource",
				"aws/* (tax) 0.00 30.00 30.00 30.00 0.00",
				"aws/us-west-1 (unmatched) 0.00 491.60 491.60 491.60 0.00",
				"azure-eus chat 392.00 352.80 352.80 -39.20 0.00 tag",
				"gcp-euw4 eu-chat 180.00 189.00 189.00 9.00 0.00 resource",
			},
			wantMatched: Matched{ByResource: 3, ByTag: 1, Unmatched: 3},
		},
		{
			name: "without instances",
			want: []string{
				"aws-use1 (credits) 0.00 -50.00 -50.00 -50.00 0.00",
				"aws-use1 (unmatched) 0.00 24.00 24.00 24.00 0.00",
				"aws-use1 (unused commitment) 0.00 0.00 110.00 110.00 110.00",
				"aws-use1 chat 983.20 391.76 941.76 -41.44 -433.20 tag sku",
				"aws-use1 embed 96.00 0.00 0.00 -96.00 0.00",
				"aws/* (tax) 0.00 30.00 30.00 30.00 0.00",
				"aws/us-west-1 (unmatched) 0.00 491.60 491.60 491.60 0.00",
				"azure-eus chat 392.00 352.80 352.80 -39.20 0.00 tag",
				"gcp-euw4 eu-chat 180.00 189.00 189.00 9.00 0.00 sku",
			},
			wantMatched: Matched{ByTag: 2, BySKU: 3, Unmatched: 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines, matched := Reconcile(fixtureCharges(t), fixtureEstimates(), tt.held, testLocator{})
			if got := lineStrings(t, lines); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if matched != tt.wantMatched {
				t.Errorf("matched %+v, want %+v", matched, tt.wantMatched)
			}
		})
	}
}

// lineStrings prints lines as "location workload estimated billed effective difference
// commitment" and the rules that matched them.
func lineStrings(t *testing.T, lines []Line) []string {
	t.Helper()
	var got []string
	for _, l := range lines {
		if !l.Day.Equal(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("line %+v is not on Nov 30", l)
		}
		s := fmt.Sprintf("%s %s %.2f %.2f %.2f %.2f %.2f", l.Location, l.Workload, l.Estimated, l.Billed, l.Effective, l.Difference(), l.Commitment)
		for _, m := range []struct {
			n    int
			name string
		}{{l.ByResource, "resource"}, {l.ByTag, "tag"}, {l.BySKU, "sku"}, {l.ByLocation, "location"}} {
			if m.n > 0 {
				s += " " + m.name
			}
		}
		got = append(got, strings.ReplaceAll(s, "-0.00", "0.00"))
	}
	return got
}

func TestReconcileShares(t *testing.T) {
	day := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	charge := func(typ string, start, end time.Time, usd float64) Charge {
		return Charge{Provider: "Google Cloud", Region: "europe-west4", Category: "Usage", Start: start, End: end,
			Billed: usd, Effective: usd, Contracted: usd, InstanceType: typ}
	}
	tests := []struct {
		name    string
		charges []Charge
		est     []Estimate
		want    []string // workload effective, in line order
	}{
		{
			// 30 over a day, estimates 3 x 10 (a) and 1 x 30 (b): a gets 30 x 30/60 = 15, b 15.
			name:    "shared in proportion to the estimates",
			charges: []Charge{charge("a3", day, day.Add(24*time.Hour), 30)},
			est:     slices.Concat(hours("a", "gcp-euw4", "a3", 3, 10), hours("b", "gcp-euw4", "a3", 1, 30)),
			want:    []string{"a 15.00", "b 15.00"},
		},
		{
			// only a ran an a3; b's g2 takes none of it.
			name:    "by instance type",
			charges: []Charge{charge("a3", day, day.Add(24*time.Hour), 30)},
			est:     slices.Concat(hours("a", "gcp-euw4", "a3", 3, 10), hours("b", "gcp-euw4", "g2", 1, 30)),
			want:    []string{"a 30.00", "b 0.00"},
		},
		{
			// no instance type on the charge: any usage at the location, 10 : 30.
			name:    "by location",
			charges: []Charge{charge("", day, day.Add(24*time.Hour), 40)},
			est:     slices.Concat(hours("a", "gcp-euw4", "a3", 1, 10), hours("b", "gcp-euw4", "g2", 1, 30)),
			want:    []string{"a 10.00", "b 30.00"},
		},
		{
			// an hourly charge matches only the estimate of its hour (b's, at 01:00).
			name:    "by hour",
			charges: []Charge{charge("a3", day.Add(time.Hour), day.Add(2*time.Hour), 12)},
			est:     slices.Concat(hours("a", "gcp-euw4", "a3", 1, 10), []Estimate{{"b", "gcp-euw4", "a3", day.Add(time.Hour), 11}}),
			want:    []string{"a 0.00", "b 12.00"},
		},
		{
			// a charge over two days, 18:00 to 06:00, splits 6 : 6 between them, both unmatched.
			name:    "across midnight",
			charges: []Charge{charge("a3", day.Add(18*time.Hour), day.Add(30*time.Hour), 24)},
			want:    []string{"(unmatched) 12.00", "(unmatched) 12.00"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			lines, _ := Reconcile(tt.charges, tt.est, nil, testLocator{})
			for _, l := range lines {
				got = append(got, fmt.Sprintf("%s %.2f", l.Workload, l.Effective))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestReconcileKeepsEveryCent: whatever the matching, the lines' effective cost adds up to the
// charges'.
func TestReconcileKeepsEveryCent(t *testing.T) {
	cs := fixtureCharges(t)
	var want, got float64
	for _, c := range cs {
		want += c.Effective
	}
	for _, held := range [][]Holding{nil, fixtureHoldings()} {
		lines, _ := Reconcile(cs, fixtureEstimates(), held, testLocator{})
		got = 0
		for _, l := range lines {
			got += l.Effective
		}
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("with %d holdings, lines sum to %.6f, charges to %.6f", len(held), got, want)
		}
	}
}

func TestChargeWithin(t *testing.T) {
	day := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	c := Charge{Start: day.Add(-12 * time.Hour), End: day.Add(12 * time.Hour), Billed: 24, Effective: 20, Contracted: 24, List: 30, Quantity: 24}
	tests := []struct {
		name         string
		since, until time.Time
		wantOK       bool
		wantBilled   float64 // 24 over 24 h: 1 an hour
		wantStart    time.Time
	}{
		{"inside", day.Add(-24 * time.Hour), day.Add(24 * time.Hour), true, 24, day.Add(-12 * time.Hour)},
		{"the day's half", day, day.Add(24 * time.Hour), true, 12, day},
		{"six hours", day.Add(time.Hour), day.Add(7 * time.Hour), true, 6, day.Add(time.Hour)},
		{"outside", day.Add(12 * time.Hour), day.Add(24 * time.Hour), false, 0, time.Time{}},
	}
	for _, tt := range tests {
		got, ok := c.Within(tt.since, tt.until)
		if ok != tt.wantOK || got.Billed != tt.wantBilled || !got.Start.Equal(tt.wantStart) {
			t.Errorf("%s: %+v, %v", tt.name, got, ok)
		}
		if ok && got.Effective/got.Billed != 20.0/24 {
			t.Errorf("%s: effective %v not in proportion", tt.name, got.Effective)
		}
	}
}
