package serving

import (
	"fmt"
	"slices"
	"strings"
)

// Env is what a policy is built with at the start of a window.
type Env struct {
	// Sources are the places a replica can be held, in Decision.Held order.
	Sources []Source
	// ColdStart is the ticks from launch to ready, the same for every policy.
	ColdStart int
	// Seed feeds the policy's own randomness; it differs per window and is fixed by --seed.
	Seed uint64
	// PastDemand is the demand before the window (Window.Past): history, not the future.
	PastDemand []float64
	// Window is the whole window, demand and capacity included. It is set only for hindsight
	// policies (optimal); an online policy gets nil and must not know the future.
	Window *Window
}

// Factory builds a policy for one window.
type Factory func(env Env) (Policy, error)

// Forecasting is a policy that forecasts demand; MAPE is its mean absolute percentage error at
// the cold-start horizon over the window, in percent. The replay reports it as forecast_mape_pct.
type Forecasting interface {
	MAPE() float64
}

type registration struct {
	factory   Factory
	hindsight bool
}

// registry holds every policy by its --policy name. Policies register themselves from their own
// file (register in an init), as internal/replay's do, so adding one touches nothing else.
var registry = map[string]registration{}

// register adds a policy under name. hindsight policies are given the whole Window.
func register(name string, f Factory, hindsight bool) {
	if _, dup := registry[name]; dup {
		panic("serving: policy registered twice: " + name)
	}
	registry[name] = registration{factory: f, hindsight: hindsight}
}

// Register adds a policy from outside the package (the service-backed bursar policies live
// above this package). It fails on a name already taken.
func Register(name string, f Factory, hindsight bool) error {
	if _, dup := registry[name]; dup {
		return fmt.Errorf("serving policy %q is already registered", name)
	}
	registry[name] = registration{factory: f, hindsight: hindsight}
	return nil
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

// ParsePolicies reads a comma-separated --policy list such as "od-autoscale,skyserve". An empty
// list means every registered policy.
func ParsePolicies(list string) ([]string, error) {
	var names []string
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if _, ok := registry[item]; !ok {
			return nil, fmt.Errorf("unknown policy %q: choose from %s", item, strings.Join(PolicyNames(), ", "))
		}
		if slices.Contains(names, item) {
			return nil, fmt.Errorf("policy %q is listed twice", item)
		}
		names = append(names, item)
	}
	if len(names) == 0 {
		return PolicyNames(), nil
	}
	return names, nil
}

// New builds the named policy for a window w, as the replay does: env.Window is w for a
// hindsight policy and nil for the others. Tests above this package compare policies with it.
func New(name string, env Env, w *Window) (Policy, error) {
	reg, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown policy %q", name)
	}
	env.Window = nil
	if reg.hindsight {
		env.Window = w
	}
	return reg.factory(env)
}
