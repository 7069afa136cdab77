package jobreplay

import (
	"fmt"
	"sort"
	"strings"
)

// Env is what a policy's factory knows of the window it is built for.
type Env struct {
	Setting Setting
	// Zones names the market's zones (trace files), in the order of View.Spot.
	Zones []string
	// Avail is the whole window, Avail[k][z]; given only to policies registered with hindsight.
	Avail [][]bool
}

// Factory builds a fresh policy for one window, so a policy may keep state across its ticks.
type Factory func(Env) (Policy, error)

type registration struct {
	factory   Factory
	hindsight bool
}

var registry = map[string]registration{}

// Register makes a policy available to the replay under name. hindsight gives the factory the
// whole window (Env.Avail): only a bound such as optimal may see it. Policies built elsewhere
// (bursar-direct, the live service's bursar) register from their own init.
func Register(name string, f Factory, hindsight bool) {
	if _, dup := registry[name]; dup {
		panic("jobs: policy " + name + " registered twice")
	}
	registry[name] = registration{f, hindsight}
}

// PolicyNames lists the registered policies in name order.
func PolicyNames() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ParsePolicies reads a comma-separated list of registered policy names. An unknown name is an
// error that lists the policies there are: a policy is never silently replaced by another.
func ParsePolicies(list string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, item := range strings.Split(list, ",") {
		name := strings.TrimSpace(item)
		if name == "" {
			continue
		}
		if _, ok := registry[name]; !ok {
			return nil, unknownPolicy(name)
		}
		if seen[name] {
			return nil, fmt.Errorf("--policy names %q twice: list each policy once", name)
		}
		seen[name] = true
		out = append(out, name)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--policy is empty: name one or more of %s", strings.Join(PolicyNames(), ", "))
	}
	return out, nil
}

func unknownPolicy(name string) error {
	return fmt.Errorf("unknown job policy %q: the policies there are: %s", name, strings.Join(PolicyNames(), ", "))
}

// build makes the named policy for one window.
func build(name string, env Env) (Policy, error) {
	reg, ok := registry[name]
	if !ok {
		return nil, unknownPolicy(name)
	}
	if !reg.hindsight {
		env.Avail = nil
	}
	p, err := reg.factory(env)
	if err != nil {
		return nil, fmt.Errorf("building policy %s: %w", name, err)
	}
	return p, nil
}
