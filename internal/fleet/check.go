package fleet

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"

	"github.com/bursar-dev/bursar/internal/events"
)

// check validates what strict decoding cannot: required values, ranges, references and the
// settings each actuator kind needs.
func (c *Config) check() error {
	if len(c.Locations) == 0 {
		return fail("list at least one location", "locations")
	}
	if len(c.Workloads) == 0 {
		return fail("list at least one workload", "workloads")
	}
	seen := map[string]bool{}
	for i := range c.Locations {
		l := &c.Locations[i]
		if err := l.check(i); err != nil {
			return err
		}
		if seen[l.Name] {
			return fail(fmt.Sprintf("location %q is defined twice; names must be unique", l.Name), "locations", i, "name")
		}
		seen[l.Name] = true
	}
	seen = map[string]bool{}
	for i := range c.Workloads {
		w := &c.Workloads[i]
		if err := w.check(i, c); err != nil {
			return err
		}
		if seen[w.Name] {
			return fail(fmt.Sprintf("workload %q is defined twice; names must be unique", w.Name), "workloads", i, "name")
		}
		seen[w.Name] = true
	}
	return nil
}

func (l *Location) check(i int) error {
	at := func(f ...any) []any { return append([]any{"locations", i}, f...) }
	switch {
	case !isName(l.Name):
		return fail("want a name of letters, digits, '-' or '_' (it becomes a NATS subject token)", at("name")...)
	case l.Provider == "":
		return fail("required: the provider prices are published under, e.g. aws, gcp, lambda", at("provider")...)
	case l.Region == "":
		return fail("required: the provider's region, as price events name it", at("region")...)
	case l.EgressPerGB < 0:
		return fail("want a price in USD per GB, 0 or more", at("egress_per_gb")...)
	case l.Capacity < 0:
		return fail("want 0 (unknown) or more instances", at("capacity")...)
	}
	return l.Actuator.check(at("actuator"))
}

func (a *Actuator) check(at []any) error {
	f := func(name string) []any { return append(slices.Clone(at), name) }
	if a.LaunchTimeout < 0 {
		return fail("want a duration of 0 (derived from the cold start) or more", f("launch_timeout")...)
	}
	switch a.Kind {
	case KindKubernetes:
		if a.NodeWait < 0 {
			return fail("want a duration of 0 (5m) or more", f("node_wait")...)
		}
	case KindWebhook:
		u, err := url.Parse(a.URL)
		if a.URL == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fail("want the http(s) URL the actions are POSTed to", f("url")...)
		}
		if a.SecretEnv == "" && a.SecretFile == "" {
			return fail("name the signing secret's environment variable (secret_env) or file (secret_file)", f("secret_env")...)
		}
		if a.Retries < 0 || a.Timeout < 0 {
			return fail("want 0 (default) or more", f("retries")...)
		}
	case KindSim:
		if a.LaunchDelay < 0 {
			return fail("want a duration of 0 or more", f("launch_delay")...)
		}
	case "":
		return fail("required: kubernetes, webhook or sim", f("kind")...)
	default:
		return fail(fmt.Sprintf("unknown kind %q; want kubernetes, webhook or sim", a.Kind), f("kind")...)
	}
	return nil
}

func (w *Workload) check(i int, c *Config) error {
	at := func(f ...any) []any { return append([]any{"workloads", i}, f...) }
	switch {
	case !isName(w.Name):
		return fail("want a name of letters, digits, '-' or '_' (it becomes a NATS subject token)", at("name")...)
	case w.GPU.Count < 1:
		return fail("want the GPUs one replica needs, 1 or more", at("gpu", "count")...)
	case len(w.GPU.Models) == 0 && w.GPU.MinMemoryGB <= 0:
		return fail("give gpu.models or gpu.min_memory_gb, so the planner knows which offers fit", at("gpu")...)
	case w.MinLocations < 0 || w.MinLocations > len(c.Locations):
		return fail(fmt.Sprintf("want 0 to %d (the number of locations)", len(c.Locations)), at("min_locations")...)
	case w.WeightsGB < 0:
		return fail("want GB, 0 or more", at("weights_gb")...)
	case w.ColdStart < 0:
		return fail("want a duration of 0 or more", at("cold_start")...)
	}
	if err := w.checkKind(at); err != nil {
		return err
	}
	if err := w.checkReplicas(at); err != nil {
		return err
	}
	if err := w.GPU.checkGPU(at); err != nil {
		return err
	}
	if err := w.checkResidency(c, at); err != nil {
		return err
	}
	for j, m := range w.Markets {
		if m != events.Spot && m != events.OnDemand && m != events.Reserved {
			return fail(fmt.Sprintf("unknown market %q; want spot, on_demand or reserved", m), at("markets", j)...)
		}
	}
	if err := w.Scaling.check(at("scaling")); err != nil {
		return err
	}
	if err := w.checkServing(at); err != nil {
		return err
	}
	return w.Kubernetes.check(w, c, at("kubernetes"))
}

func (s *Scaling) check(at []any) error {
	switch s.Metric {
	case "":
		return nil
	case MetricTokens, MetricOutputTokens, MetricRequests:
		// 0: the rates are per GPU model, in serving.per_replica (checkServing).
		if s.PerReplica < 0 || math.IsNaN(s.PerReplica) || math.IsInf(s.PerReplica, 0) {
			return fail("want the amount one replica serves, more than 0", append(at, "per_replica")...)
		}
		return nil
	case MetricUtilization:
		if !(s.PerReplica > 0 && s.PerReplica <= 100) {
			return fail("want the GPU utilization percent one replica is scaled at, more than 0 and at most 100", append(at, "per_replica")...)
		}
		return nil
	}
	return fail(fmt.Sprintf("unknown metric %q; want %s, %s, %s or %s", s.Metric, MetricTokens, MetricOutputTokens, MetricRequests, MetricUtilization),
		append(at, "metric")...)
}

// check makes sure a workload that may run on a Kubernetes location names the object for every
// market it may use there.
func (k *KubeWorkload) check(w *Workload, c *Config, at []any) error {
	switch {
	case w.IsJob() && k.Kind != "" && k.Kind != KubeJob:
		return fail(fmt.Sprintf("a job runs as a batch/v1 Job, not a %s; remove kind or set it to Job", k.Kind), append(at, "kind")...)
	case !w.IsJob() && k.Kind != "" && k.Kind != "Deployment" && k.Kind != "StatefulSet":
		return fail(fmt.Sprintf("unknown kind %q; want Deployment or StatefulSet", k.Kind), append(at, "kind")...)
	}
	kube := slices.ContainsFunc(c.Locations, func(l Location) bool { return l.Actuator.Kind == KindKubernetes })
	if !kube {
		return nil
	}
	markets := w.Markets
	if len(markets) == 0 {
		markets = []events.Market{events.Spot, events.OnDemand}
	}
	for _, m := range markets {
		if k.Object(m) == "" {
			return fail(fmt.Sprintf("name the %s object that holds %s replicas (a location uses kubernetes)", w.KubeKind(), m),
				append(at, string(m))...)
		}
	}
	return nil
}

// KubeKind is the kind of the workload's Kubernetes objects: as named, else Job for a job and
// Deployment for a serving workload.
func (w *Workload) KubeKind() string {
	switch {
	case w.Kubernetes.Kind != "":
		return w.Kubernetes.Kind
	case w.IsJob():
		return KubeJob
	}
	return "Deployment"
}

// KubeJob is the Kubernetes kind of a job's objects: a batch/v1 Job per location and market,
// started and stopped through spec.suspend.
const KubeJob = "Job"

func isName(s string) bool {
	if s == "" {
		return false
	}
	return strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0
}
