package billing

import (
	"slices"
	"strings"
	"time"
)

// Holding is an instance that a workload's ready replicas ran on at a location from From until
// To: a replica_state interval and one of the instances its actuator named.
type Holding struct {
	Workload, Location string
	// Provider is the location's provider as bursar.yaml names it (aws, azure, gcp...).
	Provider string
	// Instance is the id as the actuator reported it: an AWS instance id, a GKE node's numeric
	// instance id, an Azure VM name, a sim's instance name, or a node's providerID.
	Instance string
	From, To time.Time
}

// ResourceKey is the part of a resource id that names one instance, the same in the forms the
// providers' bills and Kubernetes write, so that a billed row's ResourceId can be compared with
// the instances a replica.state names: "i-0abc" from i-0abc, aws:///us-east-1a/i-0abc and
// arn:aws:ec2:us-east-1:444455556666:instance/i-0abc; the VM from gce://project/zone/vm and
// //compute.googleapis.com/projects/project/zones/zone/instances/vm; the VM from an Azure
// resource id (/subscriptions/.../virtualMachines/vm) or azure:///subscriptions/..., and
// "set_3" from a scale set's VM (.../virtualMachineScaleSets/set/virtualMachines/3), as the
// Kubernetes actuator names it. Keys are lower case: Azure's resource ids are case-insensitive,
// and the other providers' ids are lower case already. "" when id names nothing.
func ResourceKey(id string) string {
	s := strings.TrimSpace(id)
	if _, rest, ok := strings.Cut(s, "://"); ok { // a Kubernetes providerID
		s = rest
	}
	if strings.HasPrefix(s, "arn:") { // arn:partition:service:region:account:type/id
		s = s[strings.LastIndex(s, ":")+1:]
	}
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == '/' })
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	parts = slices.DeleteFunc(parts, func(p string) bool { return p == "" })
	n := len(parts)
	switch {
	case n == 0:
		return ""
	case n >= 4 && strings.EqualFold(parts[n-4], "virtualMachineScaleSets") && strings.EqualFold(parts[n-2], "virtualMachines"):
		return strings.ToLower(parts[n-3] + "_" + parts[n-1])
	}
	return strings.ToLower(parts[n-1])
}

// holdings indexes holdings by provider and resource key, and knows which workloads' hours at a
// location named their instances (so a charge for another instance is not theirs).
type holdings struct {
	byKey map[string][]Holding
	named map[lineKey]bool // by workload, location and hour (in the day field)
}

func newHoldings(hs []Holding) holdings {
	out := holdings{byKey: map[string][]Holding{}, named: map[lineKey]bool{}}
	for _, h := range hs {
		k := ResourceKey(h.Instance)
		if k == "" || !h.To.After(h.From) {
			continue
		}
		pk := ProviderKey(h.Provider) + "\x00" + k
		out.byKey[pk] = append(out.byKey[pk], h)
		for t := h.From.UTC().Truncate(time.Hour); t.Before(h.To); t = t.Add(time.Hour) {
			out.named[lineKey{h.Workload, h.Location, t.Unix()}] = true
		}
	}
	return out
}

// holders weighs, by workload, location and day, the time during [c.Start, c.End) that the
// instance c is billed for was held, at loc when the charge has a location (located).
func (hs holdings) holders(c Charge, loc string, located bool) map[lineKey]float64 {
	k := ResourceKey(c.ResourceID)
	if k == "" {
		return nil
	}
	var out map[lineKey]float64
	for _, h := range hs.byKey[ProviderKey(c.Provider)+"\x00"+k] {
		if located && h.Location != loc {
			continue
		}
		from, to := later(h.From, c.Start), earlier(h.To, c.End)
		for t := from; t.Before(to); {
			day := t.UTC().Truncate(24 * time.Hour)
			next := earlier(day.Add(24*time.Hour), to)
			if out == nil {
				out = map[lineKey]float64{}
			}
			out[lineKey{h.Workload, h.Location, day.Unix()}] += next.Sub(t).Seconds()
			t = next
		}
	}
	return out
}

// namedAt reports whether the workload's replicas at location named their instances in hour.
func (hs holdings) namedAt(workload, location string, hour time.Time) bool {
	return hs.named[lineKey{workload, location, hour.UTC().Truncate(time.Hour).Unix()}]
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
