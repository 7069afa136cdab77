package budget

import (
	"fmt"
	"strings"

	"github.com/bursar-dev/bursar/internal/placement"
)

// Scope selects the spend a policy covers. Set fields must all match; a scope with All set and
// no field covers the whole estate.
type Scope struct {
	Workload string
	Team     string
	Provider string
	Location string
	All      bool
}

// ParseScope reads "workload=llm-inference", "team=search,provider=aws" or "all".
func ParseScope(s string) (Scope, error) {
	s = strings.TrimSpace(s)
	if s == "all" || s == "*" {
		return Scope{All: true}, nil
	}
	var sc Scope
	if s == "" {
		return sc, nil
	}
	for part := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		v = strings.TrimSpace(v)
		if !ok || v == "" {
			return Scope{}, fmt.Errorf("scope %q: %q is not KEY=VALUE (keys: workload, team, provider, location)", s, part)
		}
		var field *string
		switch strings.TrimSpace(k) {
		case "workload":
			field = &sc.Workload
		case "team":
			field = &sc.Team
		case "provider":
			field = &sc.Provider
		case "location":
			field = &sc.Location
		default:
			return Scope{}, fmt.Errorf("scope %q: unknown key %q (keys: workload, team, provider, location)", s, k)
		}
		if *field != "" {
			return Scope{}, fmt.Errorf("scope %q: %s given twice", s, k)
		}
		*field = v
	}
	return sc, nil
}

// IsZero reports whether the scope selects nothing yet (no field and not all).
func (s Scope) IsZero() bool { return s == Scope{} }

func (s Scope) String() string {
	if s.All {
		return "all"
	}
	var parts []string
	for _, kv := range [][2]string{{"workload", s.Workload}, {"team", s.Team}, {"provider", s.Provider}, {"location", s.Location}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+"="+kv[1])
		}
	}
	return strings.Join(parts, ",")
}

// MarshalText writes the scope as ParseScope reads it.
func (s Scope) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a scope with ParseScope.
func (s *Scope) UnmarshalText(b []byte) error {
	v, err := ParseScope(string(b))
	*s = v
	return err
}

// Matches reports whether spend of workload (of team) on provider at location falls in the scope.
func (s Scope) Matches(workload, team, provider, location string) bool {
	if s.IsZero() {
		return false
	}
	return match(s.Workload, workload) && match(s.Team, team) && match(s.Provider, provider) &&
		match(s.Location, location)
}

func match(want, got string) bool { return want == "" || want == got }

// Placement is the scope as the planner's budget caps understand it.
func (s Scope) Placement() placement.Scope {
	return placement.Scope{Workload: s.Workload, Team: s.Team, Provider: s.Provider, Location: s.Location}
}
