package collect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	"go.yaml.in/yaml/v3"

	"github.com/bursar-dev/bursar/internal/pricesource"
	"github.com/bursar-dev/bursar/internal/pricing"
	"github.com/bursar-dev/bursar/internal/yamlstrict"
)

// Config is collector.yaml's prices section.
//
//	snapshot: "@every 6h"
//	defaults: {schedule: "@every 10m", jitter: 30s, timeout: 1m, retries: 3, backoff: 2s, max_backoff: 1m, stale_after: 3}
//	sources:
//	  - kind: azure
//	    region: eastus
//	  - kind: lambda
//	    api_key_env: LAMBDA_API_KEY
type Config struct {
	Snapshot string         `yaml:"snapshot"`
	Defaults JobDefaults    `yaml:"defaults"`
	Sources  []SourceConfig `yaml:"sources"`
}

// JobDefaults apply to every source that does not set its own.
type JobDefaults struct {
	Schedule   string        `yaml:"schedule"`
	Jitter     time.Duration `yaml:"jitter"`
	Timeout    time.Duration `yaml:"timeout"`
	Retries    *int          `yaml:"retries"`
	Backoff    time.Duration `yaml:"backoff"`
	MaxBackoff time.Duration `yaml:"max_backoff"`
	StaleAfter int           `yaml:"stale_after"`
	// PriceBounds widen (or narrow) the plausible price per GPU-hour; an unset side is
	// pricing.DefaultBounds'. A catalog with a price outside them fails its run.
	PriceBounds pricing.Bounds `yaml:"price_bounds"`
}

// SourceConfig configures one source. Credentials are named, never given: an environment
// variable (api_key_env) or a file (api_key_file).
type SourceConfig struct {
	Kind          string   `yaml:"kind"` // azure, aws-spot, aws-ondemand, gcp, lambda, runpod, vast, skypilot, reserved
	Region        string   `yaml:"region"`
	Regions       []string `yaml:"regions"`
	InstanceTypes []string `yaml:"instance_types"`
	Endpoint      string   `yaml:"endpoint"`
	APIKeyEnv     string   `yaml:"api_key_env"`
	APIKeyFile    string   `yaml:"api_key_file"`
	Files         []string `yaml:"files"`
	Provider      string   `yaml:"provider"`
	JobDefaults   `yaml:",inline"`

	line int
}

// Kinds lists the source kinds, for help text and errors.
var Kinds = []string{"azure", "aws-spot", "aws-ondemand", "gcp", "lambda", "runpod", "vast", "skypilot", "reserved"}

// defaultKeyEnv is the environment variable read when a keyed source names none.
var defaultKeyEnv = map[string]string{
	"gcp": "GCP_API_KEY", "lambda": "LAMBDA_API_KEY", "runpod": "RUNPOD_API_KEY", "vast": "VAST_API_KEY",
}

// ParseConfig decodes collector.yaml strictly: unknown fields, unknown kinds, missing fields and
// bad schedules are errors naming file:line and the field.
func ParseConfig(data []byte, name string) (Config, error) {
	var raw struct {
		Snapshot string      `yaml:"snapshot"`
		Defaults JobDefaults `yaml:"defaults"`
		Sources  []yaml.Node `yaml:"sources"`
	}
	if err := yamlstrict.Unmarshal(data, &raw); err != nil && !errors.Is(err, io.EOF) {
		return Config{}, yamlstrict.Error(name, err)
	}
	cfg := Config{Snapshot: orString(raw.Snapshot, "@every 6h"), Defaults: raw.Defaults}
	if field, err := raw.Defaults.PriceBounds.Or(pricing.DefaultBounds).Validate(); err != nil {
		return Config{}, fmt.Errorf("%s: field \"defaults.price_bounds.%s\": %w", name, field, err)
	}
	if _, err := cron.ParseStandard(cfg.Snapshot); err != nil {
		return Config{}, fmt.Errorf("%s: field \"snapshot\": %w", name, err)
	}
	for i := range raw.Sources {
		n := &raw.Sources[i]
		var sc SourceConfig
		if err := yamlstrict.DecodeNode(n, &sc); err != nil {
			return Config{}, yamlstrict.Error(name, err)
		}
		sc.line = n.Line
		sc.PriceBounds = sc.PriceBounds.Or(raw.Defaults.PriceBounds)
		if field, err := sc.check(); err != nil {
			return Config{}, fmt.Errorf("%s:%d: source %d, field %q: %w", name, yamlstrict.Line(n, field), i+1, field, err)
		}
		cfg.Sources = append(cfg.Sources, sc)
	}
	return cfg, nil
}

func (sc SourceConfig) check() (string, error) {
	switch sc.Kind {
	case "azure", "aws-spot", "aws-ondemand":
		if sc.Region == "" {
			return "region", fmt.Errorf("required for kind %s", sc.Kind)
		}
	case "gcp", "lambda", "runpod", "vast":
	case "skypilot":
		if len(sc.Files) == 0 {
			return "files", errors.New("list at least one SkyPilot catalog CSV")
		}
	case "reserved":
		if len(sc.Files) != 1 {
			return "files", errors.New("give exactly one contracts YAML file")
		}
	case "":
		return "kind", fmt.Errorf("required; one of %s", strings.Join(Kinds, ", "))
	default:
		return "kind", fmt.Errorf("unknown kind %q; one of %s", sc.Kind, strings.Join(Kinds, ", "))
	}
	if sc.Schedule != "" {
		if _, err := cron.ParseStandard(sc.Schedule); err != nil {
			return "schedule", err
		}
	}
	if field, err := sc.PriceBounds.Or(pricing.DefaultBounds).Validate(); err != nil {
		return "price_bounds." + field, err
	}
	return "", nil
}

// Job builds the source and applies defaults: every 10 minutes, 30 s jitter, 1 min timeout,
// 3 retries from 2 s backoff up to 1 min, stale after 3 failed runs.
func (sc SourceConfig) Job(ctx context.Context, d JobDefaults) (Job, error) {
	src, err := sc.Build(ctx)
	if err != nil {
		return Job{}, err
	}
	retries := 3
	switch {
	case sc.Retries != nil:
		retries = *sc.Retries
	case d.Retries != nil:
		retries = *d.Retries
	}
	return Job{
		Source:     src,
		Schedule:   orString(sc.Schedule, orString(d.Schedule, "@every 10m")),
		Jitter:     orDur(sc.Jitter, orDur(d.Jitter, 30*time.Second)),
		Timeout:    orDur(sc.Timeout, orDur(d.Timeout, DefaultTimeout)),
		Retries:    retries,
		Backoff:    orDur(sc.Backoff, orDur(d.Backoff, 2*time.Second)),
		MaxBackoff: orDur(sc.MaxBackoff, orDur(d.MaxBackoff, time.Minute)),
		StaleAfter: orInt(sc.StaleAfter, orInt(d.StaleAfter, 3)),
	}, nil
}

// build constructs the source, reading its credential from the environment or a file.
func (sc SourceConfig) build(ctx context.Context) (Source, error) {
	var key pricesource.Secret
	if env, keyed := defaultKeyEnv[sc.Kind]; keyed {
		var err error
		key, err = pricesource.LoadSecret(orString(sc.APIKeyEnv, env), sc.APIKeyFile)
		if err != nil && sc.Kind != "vast" { // Vast search works without a key
			return nil, fmt.Errorf("source %s: %w", sc.Kind, err)
		}
	}
	switch sc.Kind {
	case "azure":
		return &pricesource.AzureRetail{Region: sc.Region, Endpoint: sc.Endpoint}, nil
	case "aws-spot":
		return pricesource.NewAWSSpot(ctx, pricesource.AWSOptions{Region: sc.Region, Endpoint: sc.Endpoint}, sc.InstanceTypes)
	case "aws-ondemand":
		return pricesource.NewAWSOnDemand(ctx, pricesource.AWSOptions{Region: sc.Region, Endpoint: sc.Endpoint})
	case "gcp":
		return &pricesource.GCPBilling{APIKey: key, Regions: withRegion(sc.Regions, sc.Region), Endpoint: sc.Endpoint}, nil
	case "lambda":
		return &pricesource.Lambda{APIKey: key, Endpoint: sc.Endpoint}, nil
	case "runpod":
		return &pricesource.RunPod{APIKey: key, Endpoint: sc.Endpoint}, nil
	case "vast":
		return &pricesource.Vast{APIKey: key, Endpoint: sc.Endpoint}, nil
	case "skypilot":
		return &pricesource.SkyPilotFiles{Paths: sc.Files, Provider: sc.Provider}, nil
	case "reserved":
		if len(sc.Files) != 1 {
			return nil, errors.New("reserved: give exactly one contracts file")
		}
		return &pricesource.ReservedFile{Path: sc.Files[0]}, nil
	}
	return nil, fmt.Errorf("unknown source kind %q; one of %s", sc.Kind, strings.Join(Kinds, ", "))
}

func withRegion(regions []string, region string) []string {
	if region != "" {
		return append(append([]string(nil), regions...), region)
	}
	return regions
}

func orString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func orDur(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

func orInt(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}

// LoadConfig reads and parses a collector.yaml.
func LoadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("reading collector config: %w", err)
	}
	return ParseConfig(data, path)
}

// Jobs builds every configured source with its schedule settings.
func (c Config) Jobs(ctx context.Context) ([]Job, error) {
	jobs := make([]Job, 0, len(c.Sources))
	for i, sc := range c.Sources {
		j, err := sc.Job(ctx, c.Defaults)
		if err != nil {
			return nil, fmt.Errorf("source %d (line %d, kind %s): %w", i+1, sc.line, sc.Kind, err)
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}
