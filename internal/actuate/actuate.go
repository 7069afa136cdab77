// Package actuate is where the arbiter's decisions meet infrastructure. Every actuator does one
// thing: set the number of replicas a workload runs on one market at one location. Setting (never
// adding) makes every call idempotent, which is what lets the arbiter resume an interrupted action
// without applying it twice.
package actuate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/bursar-dev/bursar/internal/events"
)

// Group is one scale target: a workload's replicas on one market at one location (one Deployment
// in one cluster, say).
type Group struct {
	Workload string        `json:"workload"`
	Location string        `json:"location"`
	Market   events.Market `json:"market"`
}

func (g Group) String() string { return g.Workload + "@" + g.Location + "/" + string(g.Market) }

// CompareGroups orders groups by workload, location and market, for a fixed order wherever one
// matters (who gets the last capacity, which group a notice reaches first).
func CompareGroups(a, b Group) int {
	return cmp.Or(cmp.Compare(a.Workload, b.Workload), cmp.Compare(a.Location, b.Location), cmp.Compare(a.Market, b.Market))
}

// Target is one action as an actuator sees it: set Group's replicas to Replicas. ActionID is
// stable across retries and restarts, so a receiver can deduplicate.
type Target struct {
	ActionID string `json:"action_id"`
	Group
	Offer    string `json:"offer,omitempty"`
	Replicas int    `json:"replicas"`
	Kind     string `json:"kind"` // launch, drain, retire, scale or checkpoint
	Reason   string `json:"reason,omitempty"`
}

// KindCheckpoint is the kind of a Target that asks a job's instances in Group to save their
// progress now (a reclaim notice reached one): it changes no count, Replicas is what the group
// holds. An actuator passes it on (webhook), marks the object (kube) or records it (sim).
const KindCheckpoint = "checkpoint"

// Actuator scales groups. Scale must be idempotent. Desired reads back the count the
// infrastructure holds now, so an action interrupted after the call can be recognised as done;
// an actuator that cannot tell returns ErrUnknown, and the action is sent again with its id.
type Actuator interface {
	Scale(ctx context.Context, t Target) error
	Desired(ctx context.Context, g Group) (int, error)
}

// Observed is what a group runs now. Instances, when the actuator knows them, names the nodes or
// instances the group's ready replicas run on, and Starting those of replicas not ready yet, so a
// reclaim notice can be matched to its workload (never guessed). Pending counts replicas asked for
// that got no instance at all, with the actuator's Reason (ReasonNoCapacity when the provider has
// none): the arbiter gives such a launch up and places it elsewhere.
type Observed struct {
	Group
	Offer     string
	Desired   int
	Ready     int
	Instances []string
	Starting  []string
	Pending   int
	Reason    string
}

// ReasonNoCapacity is the Pending reason of a launch the provider has no capacity for (an
// Unschedulable pod, an InsufficientInstanceCapacity error).
const ReasonNoCapacity = "insufficient capacity"

// Reporter is an actuator that can say what runs, to be published as replica.state.
type Reporter interface {
	Observe(ctx context.Context) ([]Observed, error)
}

// Errors an actuator returns, for errors.Is.
var (
	// ErrUnknown: the actuator cannot read back what it holds.
	ErrUnknown = errors.New("actuator cannot read back its state")
	// ErrNotFound: the object the group maps to does not exist (a Deployment not created yet,
	// a location with no actuator). Retrying will not help until someone fixes the setup.
	ErrNotFound = errors.New("scale target not found")
)

// Router sends each group to the actuator of its location.
type Router map[string]Actuator

var (
	_ Actuator = Router(nil)
	_ Reporter = Router(nil)
)

// Scale sends t to its location's actuator.
func (r Router) Scale(ctx context.Context, t Target) error {
	a, err := r.route(t.Group)
	if err != nil {
		return err
	}
	return a.Scale(ctx, t)
}

// Desired asks g's location's actuator.
func (r Router) Desired(ctx context.Context, g Group) (int, error) {
	a, err := r.route(g)
	if err != nil {
		return 0, err
	}
	return a.Desired(ctx, g)
}

// Observe asks every actuator that can report, once each (several locations may share one).
func (r Router) Observe(ctx context.Context) ([]Observed, error) {
	var out []Observed
	var errs []error
	var asked []Reporter
	for _, loc := range r.locations() {
		rep, ok := r[loc].(Reporter)
		if !ok || slices.Contains(asked, rep) {
			continue
		}
		asked = append(asked, rep)
		obs, err := rep.Observe(ctx)
		out = append(out, obs...)
		if err != nil {
			errs = append(errs, fmt.Errorf("location %s: %w", loc, err))
		}
	}
	return out, errors.Join(errs...)
}

func (r Router) locations() []string {
	locs := make([]string, 0, len(r))
	for l := range r {
		locs = append(locs, l)
	}
	slices.Sort(locs)
	return locs
}

func (r Router) route(g Group) (Actuator, error) {
	a, ok := r[g.Location]
	if !ok {
		return nil, fmt.Errorf("%w: no actuator for location %q (known: %s); add it to bursar.yaml",
			ErrNotFound, g.Location, strings.Join(r.locations(), ", "))
	}
	return a, nil
}
