package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/bursar-dev/bursar/internal/collect"
	"github.com/bursar-dev/bursar/internal/gpu"
	"github.com/bursar-dev/bursar/internal/reclaim"
	"github.com/bursar-dev/bursar/internal/tokens"
	"github.com/bursar-dev/bursar/internal/yamlstrict"
)

// Config is collector.yaml: which price sources, reclaim watchers, GPU telemetry and scrape
// targets this collector runs. A nil section is off.
type Config struct {
	Prices   *collect.Config
	Watchers reclaim.Config
	GPU      *gpu.Config
	Scrape   *tokens.Config
}

// fileConfig is the document as written. node and location are defaults for every section that
// places what it observes, so a node-local file names them once.
type fileConfig struct {
	Node     string          `yaml:"node"`
	Location string          `yaml:"location"`
	Prices   yaml.Node       `yaml:"prices"`
	Watchers *reclaim.Config `yaml:"watchers"`
	GPU      *gpu.Config     `yaml:"gpu"`
	Scrape   *tokens.Config  `yaml:"scrape"`
}

// LoadConfig reads and parses collector.yaml at path.
func LoadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("reading collector config: %w (give its path with --config)", err)
	}
	return ParseConfig(data, path)
}

// ParseConfig decodes collector.yaml strictly. Every error names the file, the line and the
// field, so a bad deployment fails at start and says where to look.
func ParseConfig(data []byte, name string) (Config, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return Config{}, yamlError(name, nil, err)
	}
	doc := document(&root)
	if err := checkEmptyValues(name, doc, ""); err != nil {
		return Config{}, err
	}
	var f fileConfig
	if err := yamlstrict.Unmarshal(data, &f); err != nil && !errors.Is(err, io.EOF) {
		return Config{}, yamlError(name, doc, err)
	}
	node, err := expandEnv(name, doc, "node", f.Node)
	if err != nil {
		return Config{}, err
	}
	location, err := expandEnv(name, doc, "location", f.Location)
	if err != nil {
		return Config{}, err
	}
	cfg := Config{GPU: f.GPU, Scrape: f.Scrape}
	if f.Watchers != nil {
		cfg.Watchers = *f.Watchers
	}
	cfg.applyDefaults(node, location)
	if err := cfg.validate(name, doc); err != nil {
		return Config{}, err
	}
	if f.Prices.Kind != 0 {
		p, err := collect.ParseConfig(pricesDocument(data, doc, &f.Prices), name)
		if err != nil {
			return Config{}, err
		}
		cfg.Prices = &p
	}
	if cfg.empty() {
		return Config{}, fmt.Errorf("%s: configures nothing to run: add prices, watchers, gpu or scrape (see examples/collector.yaml)", name)
	}
	return cfg, nil
}

func (c Config) empty() bool {
	w := c.Watchers
	return (c.Prices == nil || len(c.Prices.Sources) == 0) && c.GPU == nil &&
		(c.Scrape == nil || len(c.Scrape.Targets) == 0) &&
		w.AWS == nil && w.AWSEvents == nil && w.GCP == nil && w.Azure == nil
}

// applyDefaults fills the node and location of every section that left them empty.
func (c *Config) applyDefaults(node, location string) {
	w := c.Watchers
	var nodes []*reclaim.NodeConfig
	if w.AWS != nil {
		nodes = append(nodes, &w.AWS.NodeConfig)
	}
	if w.GCP != nil {
		nodes = append(nodes, &w.GCP.NodeConfig)
	}
	if w.Azure != nil {
		nodes = append(nodes, &w.Azure.NodeConfig)
	}
	for _, n := range nodes {
		n.Location = orString(n.Location, location)
		n.Node = orString(n.Node, node)
	}
	if e := w.AWSEvents; e != nil && len(e.Locations) == 0 {
		e.Location = orString(e.Location, location)
	}
	if c.GPU != nil {
		c.GPU.Location = orString(c.GPU.Location, location)
		c.GPU.Node = orString(c.GPU.Node, node)
	}
	if c.Scrape != nil {
		for i := range c.Scrape.Targets {
			c.Scrape.Targets[i].Location = orString(c.Scrape.Targets[i].Location, location)
		}
	}
}

// validate runs each section's own checks and points their field paths at the file.
func (c Config) validate(name string, doc *yaml.Node) error {
	if err := c.Watchers.Validate(); err != nil {
		var fe *reclaim.FieldError
		if errors.As(err, &fe) {
			return fieldError(name, doc, "watchers."+fe.Field, fe.Problem)
		}
		return fmt.Errorf("%s: watchers: %w", name, err)
	}
	if c.GPU != nil {
		if err := c.GPU.Validate(); err != nil {
			var fe *gpu.FieldError
			if errors.As(err, &fe) {
				return fieldError(name, doc, "gpu."+fe.Field, fe.Problem)
			}
			return fmt.Errorf("%s: gpu: %w", name, err)
		}
	}
	if c.Scrape != nil {
		if err := c.Scrape.Validate(); err != nil {
			var fe *tokens.FieldError
			if errors.As(err, &fe) {
				return fieldError(name, doc, "scrape."+fe.Field, fe.Problem)
			}
			return fmt.Errorf("%s: scrape: %w", name, err)
		}
	}
	return nil
}

// fieldError says which field of the file is wrong, at the line of the deepest part of its path
// that the file holds (the section's line when the field is missing altogether).
func fieldError(name string, doc *yaml.Node, path, problem string) error {
	if path == "location" || strings.HasSuffix(path, ".location") {
		problem += " (or set location: once at the top of the file)"
	}
	return fmt.Errorf("%s:%d: field %q: %s", name, yamlstrict.Line(doc, path), path, problem)
}

// expandEnv replaces ${NAME} in a top-level default with the environment variable, so one
// ConfigMap serves every node of a DaemonSet (node: ${NODE_NAME}).
func expandEnv(name string, doc *yaml.Node, field, value string) (string, error) {
	var missing []string
	out := os.Expand(value, func(v string) string {
		s, ok := os.LookupEnv(v)
		if !ok || s == "" {
			missing = append(missing, v)
		}
		return s
	})
	if len(missing) > 0 {
		return "", fieldError(name, doc, field, fmt.Sprintf("names $%s, which is not set in the environment", missing[0]))
	}
	return out, nil
}

// checkEmptyValues rejects a key with no value: `aws_imds:` alone would decode as "off", which is
// never what its writer meant.
func checkEmptyValues(name string, n *yaml.Node, at string) error {
	if n == nil {
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			path := join(at, k.Value)
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
				return fmt.Errorf("%s:%d: field %q has no value: give it one, write {} to turn a section on with its defaults, or remove the line",
					name, k.Line, path)
			}
			if err := checkEmptyValues(name, v, path); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for i, item := range n.Content {
			if err := checkEmptyValues(name, item, at+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	}
	return nil
}

// yamlError rewrites yaml.v3's problems as "file:N: field ...: ...", one per line.
func yamlError(name string, doc *yaml.Node, err error) error {
	ps := yamlstrict.Problems(err)
	out := make([]string, len(ps))
	for i, p := range ps {
		path := ""
		if p.Line > 0 {
			path = pathAtLine(doc, p.Line, "")
		}
		if p.Field != "" {
			p.Msg = fmt.Sprintf("unknown field %q; check its spelling and section against examples/collector.yaml", orString(path, p.Field))
		} else if path != "" {
			p.Msg = fmt.Sprintf("field %q: %s", path, p.Msg)
		}
		out[i] = p.At(name)
	}
	return errors.New(strings.Join(out, "\n"))
}

// document is the top-level mapping of a parsed file, or nil for an empty one.
func document(root *yaml.Node) *yaml.Node {
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		return root.Content[0]
	}
	return nil
}

// pathAtLine is the path of the deepest key (or its value) that sits on line, such as
// "watchers.aws_imds.interval" or "scrape.targets[1].url"; "" when none does.
func pathAtLine(n *yaml.Node, line int, at string) string {
	if n == nil {
		return ""
	}
	found := ""
	visit := func(path string, k, v *yaml.Node) {
		if deeper := pathAtLine(v, line, path); deeper != "" {
			found = deeper
		} else if found == "" && ((k != nil && k.Line == line) || v.Line == line) {
			found = path
		}
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content) && found == ""; i += 2 {
			visit(join(at, n.Content[i].Value), n.Content[i], n.Content[i+1])
		}
	case yaml.SequenceNode:
		for i := 0; i < len(n.Content) && found == ""; i++ {
			visit(at+"["+strconv.Itoa(i)+"]", nil, n.Content[i])
		}
	}
	return found
}

// pricesDocument cuts the prices section out of the file as a document of its own with every
// line where it was, so collect.ParseConfig decodes it strictly and its errors name the right
// lines. A block mapping is cut as written; any other style is re-encoded in place.
func pricesDocument(data []byte, doc, value *yaml.Node) []byte {
	pad := strings.Repeat("\n", max(value.Line-1, 0))
	if value.Kind != yaml.MappingNode || value.Style&yaml.FlowStyle != 0 {
		b, err := yaml.Marshal(value)
		if err != nil {
			return []byte(pad)
		}
		return append([]byte(pad), b...)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	end := len(lines)
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if k := doc.Content[i]; k.Line > value.Line && k.Line-1 < end {
			end = k.Line - 1
		}
	}
	return append([]byte(pad), bytes.Join(lines[value.Line-1:end], nil)...)
}

func join(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}

func orString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
