package billing

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestResourceKey(t *testing.T) {
	tests := []struct {
		name, id, want string
	}{
		{"aws instance id", "i-0abc", "i-0abc"},
		{"aws providerID", "aws:///us-east-1a/i-0abc", "i-0abc"},
		{"aws arn", "arn:aws:ec2:us-east-1:444455556666:instance/i-0abc", "i-0abc"},
		{"gcp providerID", "gce://bursar-eu/europe-west4-a/eu-chat-0", "eu-chat-0"},
		{"gcp full resource name", "//compute.googleapis.com/projects/bursar-eu/zones/europe-west4-a/instances/eu-chat-0", "eu-chat-0"},
		{"gcp numeric id (global name)", "//compute.googleapis.com/projects/123/zones/europe-west4-a/instances/4417051372", "4417051372"},
		{"azure resource id", "/subscriptions/S/resourceGroups/RG/providers/Microsoft.Compute/virtualMachines/Chat-0", "chat-0"},
		{"azure providerID", "azure:///subscriptions/s/resourcegroups/rg/providers/microsoft.compute/virtualmachines/chat-0", "chat-0"},
		{"azure scale set VM", "azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/Pool/virtualMachines/3", "pool_3"},
		{"azure scale set itself", "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/pool", "pool"},
		{"spaces", "  i-0abc ", "i-0abc"},
		{"spaces in a segment", "gce://p/z/ vm-1 ", "vm-1"},
		{"empty", "", ""},
		{"slashes only", "///", ""},
		{"scheme only", "gce://", ""},
		{"bare arn", "arn:", ""},
	}
	for _, tt := range tests {
		if got := ResourceKey(tt.id); got != tt.want {
			t.Errorf("%s: ResourceKey(%q) = %q, want %q", tt.name, tt.id, got, tt.want)
		}
	}
}

// FuzzResourceKey: any id gives a key without slashes, in lower case, and the key of an
// instance named in a providerID is the key of the name.
func FuzzResourceKey(f *testing.F) {
	for _, s := range []string{"i-0abc", "aws:///us-east-1a/i-0abc", "arn:aws:ec2:r:a:instance/i-0abc", "gce://p/z/vm",
		"/subscriptions/s/virtualMachineScaleSets/p/virtualMachines/3", "://", "arn:x/y:z", "ÄB/ǅ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		k := ResourceKey(id)
		if strings.Contains(k, "/") || strings.ToLower(k) != k {
			t.Fatalf("ResourceKey(%q) = %q", id, k)
		}
		name := strings.TrimSpace(strings.NewReplacer("/", "", ":", "").Replace(id))
		if got, want := ResourceKey("gce://p/z/"+name), ResourceKey(name); name != "" && got != want {
			t.Fatalf("ResourceKey of %q in a providerID = %q, of the name %q", name, got, want)
		}
	})
}

// TestReconcileByResource: a usage charge goes to the workloads whose replicas held its resource
// in its charge period, before its tags and the location and SKU are looked at.
func TestReconcileByResource(t *testing.T) {
	d := func(h int) time.Time { return time.Date(2026, 11, 30, h, 0, 0, 0, time.UTC) }
	aws := func(resource string, tags map[string]string, from, to int, usd float64) Charge {
		return Charge{Provider: "AWS", Region: "us-east-1", SubAccountID: "444455556666", Category: "Usage", Start: d(from), End: d(to),
			Billed: usd, Effective: usd, Contracted: usd, InstanceType: "p5.48xlarge", ResourceID: resource, Tags: tags}
	}
	chatTag := map[string]string{"bursar-workload": "chat"}
	est := slices.Concat(hours("chat", "aws-use1", "p5.48xlarge", 12, 10), hours("embed", "aws-use1", "p5.48xlarge", 12, 10))
	tests := []struct {
		name    string
		charges []Charge
		held    []Holding
		want    []string // location workload effective rule, in line order, lines with charges only
	}{
		{
			// Tagged for chat, but the bill's resource is the instance embed ran on: embed's.
			name:    "the resource id wins over the tag",
			charges: []Charge{aws("arn:aws:ec2:us-east-1:444455556666:instance/i-0b", chatTag, 0, 24, 48)},
			held:    []Holding{{"embed", "aws-use1", "aws", "aws:///us-east-1a/i-0b", d(0), d(12)}},
			want:    []string{"aws-use1 embed 48.00 resource"},
		},
		{
			// One instance, chat's from 00:00 to 06:00 and embed's from 06:00 to 18:00: 24 x 6/18
			// = 8.00 and 24 x 12/18 = 16.00.
			name:    "shared by the time each held it",
			charges: []Charge{aws("i-0a", nil, 0, 24, 24)},
			held:    []Holding{{"chat", "aws-use1", "aws", "i-0a", d(0), d(6)}, {"embed", "aws-use1", "aws", "i-0a", d(6), d(18)}},
			want:    []string{"aws-use1 chat 8.00 resource", "aws-use1 embed 16.00 resource"},
		},
		{
			// The instance was held from 00:00 to 10:00; the hourly charge is for 12:00. It
			// falls back to the tag.
			name:    "outside the hours held",
			charges: []Charge{aws("i-0a", chatTag, 12, 13, 10)},
			held:    []Holding{{"embed", "aws-use1", "aws", "i-0a", d(0), d(10)}},
			want:    []string{"aws-use1 chat 10.00 tag"},
		},
		{
			// An id that another provider's replica held is not this charge's.
			name:    "another provider's instance of the same name",
			charges: []Charge{aws("vm-1", chatTag, 0, 24, 5)},
			held:    []Holding{{"embed", "gcp-euw4", "gcp", "gce://p/z/vm-1", d(0), d(12)}},
			want:    []string{"aws-use1 chat 5.00 tag"},
		},
		{
			// The charge is at aws-use1; a holding of the same name at aws-usw2 is not its.
			name:    "another location's instance",
			charges: []Charge{aws("i-0a", chatTag, 0, 24, 5)},
			held:    []Holding{{"embed", "aws-usw2", "aws", "i-0a", d(0), d(12)}},
			want:    []string{"aws-use1 chat 5.00 tag"},
		},
		{
			// The charge's sub-account is no location's, but embed's replica at aws-use1 held the
			// instance: the charge is embed's, there.
			name: "a charge at no location, held by a replica",
			charges: []Charge{func() Charge {
				c := aws("i-0a", nil, 0, 24, 7)
				c.SubAccountID = "999"
				return c
			}()},
			held: []Holding{{"embed", "aws-use1", "aws", "i-0a", d(0), d(12)}},
			want: []string{"aws-use1 embed 7.00 resource"},
		},
		{
			// Both workloads' p5 hours named their instances, i-0a and i-0b; a p5 charge for i-0c
			// is neither's: unmatched, not shared by location and SKU.
			name:    "an instance no replica held, where replicas named theirs",
			charges: []Charge{aws("i-0c", nil, 0, 24, 30)},
			held:    []Holding{{"chat", "aws-use1", "aws", "i-0a", d(0), d(12)}, {"embed", "aws-use1", "aws", "i-0b", d(0), d(12)}},
			want:    []string{"aws-use1 (unmatched) 30.00"},
		},
		{
			// Only chat named its instances; embed's hours did not: i-0c's 30.00 is embed's alone,
			// by location and SKU.
			name:    "an instance no replica held, where some did not name theirs",
			charges: []Charge{aws("i-0c", nil, 0, 24, 30)},
			held:    []Holding{{"chat", "aws-use1", "aws", "i-0a", d(0), d(12)}},
			want:    []string{"aws-use1 embed 30.00 sku"},
		},
		{
			// Azure resource ids are case-insensitive: the bill's and the providerID's cases differ.
			name: "azure, case-insensitive",
			charges: []Charge{{Provider: "Microsoft", Region: "eastus", Category: "Usage", Start: d(0), End: d(24), Billed: 9, Effective: 9,
				ResourceID: "/subscriptions/S/resourceGroups/RG/providers/Microsoft.Compute/virtualMachines/Chat-0"}},
			held: []Holding{{"chat", "azure-eus", "azure", "azure:///subscriptions/s/resourcegroups/rg/providers/microsoft.compute/virtualmachines/chat-0", d(0), d(4)}},
			want: []string{"azure-eus chat 9.00 resource"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines, _ := Reconcile(tt.charges, est, tt.held, testLocator{})
			var got []string
			for _, l := range lines {
				if l.Charges == 0 {
					continue
				}
				s := fmt.Sprintf("%s %s %.2f", l.Location, l.Workload, l.Effective)
				for _, m := range []struct {
					n    int
					name string
				}{{l.ByResource, "resource"}, {l.ByTag, "tag"}, {l.BySKU, "sku"}} {
					if m.n > 0 {
						s += " " + m.name
					}
				}
				got = append(got, s)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
