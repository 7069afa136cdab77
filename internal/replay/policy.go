package replay

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Policy decides, tick by tick, how many spot instances to hold per zone and how many on-demand.
// A policy is built fresh for each window and sees only what Observation gives it.
type Policy interface {
	Decide(obs *Observation) Decision
}

// Env is what a policy is built with at the start of a window.
type Env struct {
	// Zones names the trace's zones, in Decision.Spot order.
	Zones []string
	// Rules are the replay's rules; Rules.Extra is this policy's E (a "name:E" spec overrides it).
	Rules Rules
	// Seed feeds the policy's own randomness; it differs per window and is fixed by --seed.
	Seed uint64
	// Capacity[t][z] is the whole window's capacity. It is set only for hindsight policies
	// (Optimal); an online policy gets nil and must not know the future.
	Capacity [][]int
}

// Factory builds a policy for one window.
type Factory func(env Env) (Policy, error)

type registration struct {
	factory   Factory
	hindsight bool
}

// registry holds every policy by its --policy name. Policies register themselves from their own
// file (register in an init), so adding one, such as bursar, touches nothing else.
var registry = map[string]registration{}

// register adds a policy under name. hindsight policies are given the window's future capacity.
func register(name string, f Factory, hindsight bool) {
	if _, dup := registry[name]; dup {
		panic("replay: policy registered twice: " + name)
	}
	registry[name] = registration{factory: f, hindsight: hindsight}
}

// PolicyNames lists the registered policies, sorted.
func PolicyNames() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// PolicySpec is one entry of --policy: a registered name and, optionally, its own E ("name:E").
type PolicySpec struct {
	Name  string
	Extra int // -1: use the replay's --extra
}

// String is the spec as the user wrote it, and the name shown in results.
func (s PolicySpec) String() string {
	if s.Extra < 0 {
		return s.Name
	}
	return s.Name + ":" + strconv.Itoa(s.Extra)
}

// ParsePolicies reads a comma-separated --policy list such as "spothedge,even-spread:0,optimal".
func ParsePolicies(list string) ([]PolicySpec, error) {
	var specs []PolicySpec
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		spec := PolicySpec{Name: item, Extra: -1}
		if name, e, ok := strings.Cut(item, ":"); ok {
			n, err := strconv.Atoi(e)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("policy %q: extra replicas after ':' must be a whole number >= 0", item)
			}
			spec = PolicySpec{Name: name, Extra: n}
		}
		if _, ok := registry[spec.Name]; !ok {
			return nil, fmt.Errorf("unknown policy %q: choose from %s", spec.Name, strings.Join(PolicyNames(), ", "))
		}
		if slices.Contains(specs, spec) {
			return nil, fmt.Errorf("policy %q is listed twice", item)
		}
		specs = append(specs, spec)
	}
	if len(specs) == 0 {
		return nil, fmt.Errorf("no policy given: choose one or more of %s", strings.Join(PolicyNames(), ", "))
	}
	return specs, nil
}
