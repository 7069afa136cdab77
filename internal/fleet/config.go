// Package fleet reads bursar.yaml: the locations the arbiter may place replicas in (and how to act
// on each) and the workloads it places. Decoding is strict, because a typo in a fleet file moves
// real money: an unknown field, a missing value or a bad unit fails with file:line, the field and
// what was expected.
package fleet

import (
	"time"

	"github.com/bursar-dev/bursar/internal/events"
)

// Config is a whole bursar.yaml.
//
//	locations:
//	  - name: aws-use1
//	    provider: aws
//	    region: us-east-1
//	    zones: [us-east-1a, us-east-1b]
//	    residency: [us]
//	    egress_per_gb: 0.09
//	    actuator: {kind: kubernetes, context: prod-use1, namespace: inference}
//	workloads:
//	  - name: chat
//	    gpu: {models: [H100-80GB], count: 1}
//	    replicas: {min: 2, max: 8}
//	    ...
type Config struct {
	Locations []Location `yaml:"locations"`
	Workloads []Workload `yaml:"workloads"`
}

// Location is a place replicas can run: one provider's region (some or all of its zones), or a
// cluster of one's own, with the actuator that scales replicas there.
type Location struct {
	Name     string `yaml:"name"`
	Provider string `yaml:"provider"`
	Region   string `yaml:"region"`
	// Zones limits the location to these zones of the region; empty means every zone. Prices for
	// other zones are not this location's.
	Zones       []string `yaml:"zones"`
	Residency   []string `yaml:"residency"`
	EgressPerGB float64  `yaml:"egress_per_gb"`
	// Capacity is a hint of how many more instances fit here; 0 means unknown.
	Capacity int `yaml:"capacity"`
	// AccountIDs are the provider's billing or sub-account ids (AWS account, Azure subscription,
	// GCP project) whose charges are this location's; empty means any. Billing reconciliation
	// and the FOCUS export use them.
	AccountIDs []string `yaml:"account_ids"`
	Actuator   Actuator `yaml:"actuator"`
}

// Actuator says how replicas at a location are scaled. Which fields apply depends on Kind.
type Actuator struct {
	Kind string `yaml:"kind"` // kubernetes, webhook or sim

	// kubernetes: the kube context (from the kubeconfig) and namespace of the location's cluster.
	// With neither Context nor Kubeconfig, the location is the cluster the arbiter runs in,
	// reached with its pod's ServiceAccount.
	Context    string `yaml:"context"`
	Kubeconfig string `yaml:"kubeconfig"` // default: $KUBECONFIG or ~/.kube/config
	Namespace  string `yaml:"namespace"`  // default: "default"
	// NodeWait is how long a pod the scheduler marked Unschedulable may wait for a node (a
	// cluster autoscaler, Karpenter) before it counts as pending for want of capacity and the
	// arbiter gives its launch up. 0: 5 minutes.
	NodeWait time.Duration `yaml:"node_wait"`

	// webhook: where to POST actions, and where the signing secret comes from (an environment
	// variable or a file; never the secret itself).
	URL        string        `yaml:"url"`
	SecretEnv  string        `yaml:"secret_env"`
	SecretFile string        `yaml:"secret_file"`
	Timeout    time.Duration `yaml:"timeout"` // per attempt, default 10s
	Retries    int           `yaml:"retries"` // default 5

	// sim: how long a launch takes to become ready at this location.
	LaunchDelay time.Duration `yaml:"launch_delay"`

	// LaunchTimeout is how long a launch at this location may take to become ready before the
	// arbiter gives it up and places the replica elsewhere (any kind). 0: derived from the
	// workload's cold start.
	LaunchTimeout time.Duration `yaml:"launch_timeout"`
}

// Actuator kinds.
const (
	KindKubernetes = "kubernetes"
	KindWebhook    = "webhook"
	KindSim        = "sim"
)

// Workload is something that needs replicas: a serving workload (the default kind) or a
// deadline-bound job (kind job, see Job).
type Workload struct {
	Name string `yaml:"name"`
	Team string `yaml:"team"`
	Kind string `yaml:"kind"` // serving (default) or job
	GPU  GPU    `yaml:"gpu"`
	// Job is a job's work, deadline and overhead; set only on kind job.
	Job *Job `yaml:"job"`
	// Replicas bounds the replica count; demand from the scaling target moves it in between.
	Replicas     Replicas        `yaml:"replicas"`
	MinLocations int             `yaml:"min_locations"`
	Markets      []events.Market `yaml:"markets"`   // empty: every market
	Residency    []string        `yaml:"residency"` // a location must carry one of these tags
	WeightsGB    float64         `yaml:"weights_gb"`
	ColdStart    time.Duration   `yaml:"cold_start"`
	Scaling      Scaling         `yaml:"scaling"`
	// Serving is what one replica serves per GPU model at its latency target, and the share of
	// minutes the workload must have enough capacity (serving.go).
	Serving    Serving      `yaml:"serving"`
	Kubernetes KubeWorkload `yaml:"kubernetes"`
}

// GPU is what one replica needs.
type GPU struct {
	Models      []string `yaml:"models"` // normalized names, e.g. H100-80GB; empty: any with min_memory_gb
	Count       int      `yaml:"count"`  // GPUs per replica
	MinMemoryGB float64  `yaml:"min_memory_gb"`
}

// Replicas bounds a workload's replica count.
type Replicas struct {
	Min int `yaml:"min"`
	Max int `yaml:"max"` // 0: no bound beyond demand
}

// Scaling turns telemetry into demand: ceil(observed / per_replica) replicas.
type Scaling struct {
	// Metric is tokens_per_second (prompt and generated), output_tokens_per_second (generated
	// only), requests_per_second or gpu_utilization (percent per replica).
	Metric string `yaml:"metric"`
	// PerReplica is what one replica serves of the metric: the utilization percent to scale at,
	// or, for a workload on one GPU model, its tokens or requests per second (a shorthand for
	// serving.per_replica). After Parse, a workload whose rates are per model in
	// serving.per_replica has the lowest of them here, so code that sizes demand in replicas of
	// one rate sizes for the slowest model it may get; Workload.RateFor gives each model's.
	PerReplica float64 `yaml:"per_replica"`
}

// The scaling metrics.
const (
	MetricTokens = "tokens_per_second"
	// MetricOutputTokens counts generated tokens only: the unit of decode throughput profiles
	// (output tokens/s per replica at a TPOT target), which prompt tokens would inflate.
	MetricOutputTokens = "output_tokens_per_second"
	MetricRequests     = "requests_per_second"
	MetricUtilization  = "gpu_utilization"
)

// KubeWorkload names the workload's Deployments (or StatefulSets) in each location's cluster:
// spot and on-demand replicas run as separate objects, so each market is scaled on its own.
type KubeWorkload struct {
	Kind     string `yaml:"kind"` // Deployment (default) or StatefulSet; Job (the default) for a job
	Spot     string `yaml:"spot"`
	OnDemand string `yaml:"on_demand"`
	Reserved string `yaml:"reserved"`
}

// Object returns the object that holds the workload's replicas on market m, "" when none is named.
func (k KubeWorkload) Object(m events.Market) string {
	switch m {
	case events.Spot:
		return k.Spot
	case events.OnDemand:
		return k.OnDemand
	case events.Reserved:
		return k.Reserved
	}
	return ""
}

// Location returns the named location.
func (c *Config) Location(name string) (*Location, bool) {
	for i := range c.Locations {
		if c.Locations[i].Name == name {
			return &c.Locations[i], true
		}
	}
	return nil, false
}

// Workload returns the named workload.
func (c *Config) Workload(name string) (*Workload, bool) {
	for i := range c.Workloads {
		if c.Workloads[i].Name == name {
			return &c.Workloads[i], true
		}
	}
	return nil, false
}

// Match returns the location a price or reclaim observed at provider, region and zone belongs
// to: the first whose provider and region match and whose zones list the zone (or is empty).
func (c *Config) Match(provider, region, zone string) (*Location, bool) {
	for i := range c.Locations {
		l := &c.Locations[i]
		if l.Provider != provider || l.Region != region {
			continue
		}
		if len(l.Zones) == 0 || zone == "" {
			return l, true
		}
		for _, z := range l.Zones {
			if z == zone {
				return l, true
			}
		}
	}
	return nil, false
}
