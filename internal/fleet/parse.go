package fleet

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/bursar-dev/bursar/internal/yamlstrict"
)

// Error is a problem in a fleet file: where it is and what was expected there.
type Error struct {
	File  string
	Line  int    // 0 when unknown
	Field string // a path like workloads[1].replicas.min; empty for the whole file
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	if e.Field != "" {
		b.WriteString(": field " + e.Field)
	}
	b.WriteString(": " + e.Msg)
	return b.String()
}

// Load reads and checks a fleet file.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading fleet config: %w (pass the file with --config)", err)
	}
	return Parse(data, path)
}

// Parse decodes a fleet file strictly and checks it. name is used in errors.
func Parse(data []byte, name string) (*Config, error) {
	var cfg Config
	if err := yamlstrict.Unmarshal(data, &cfg); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: name, Msg: "the file is empty; want locations: and workloads:"}
		}
		return nil, yamlError(name, err)
	}
	var root yaml.Node
	_ = yaml.Unmarshal(data, &root) // it decoded above, so it parses
	if err := cfg.check(); err != nil {
		var pe *pathError
		if errors.As(err, &pe) {
			return nil, &Error{File: name, Line: yamlstrict.Line(&root, pe.field()), Field: pe.field(), Msg: pe.msg}
		}
		return nil, &Error{File: name, Msg: err.Error()}
	}
	for i := range cfg.Workloads {
		cfg.Workloads[i].fillReplicaRate()
	}
	return &cfg, nil
}

// yamlError turns yaml.v3's error into a fleet Error naming the first problem's line.
func yamlError(name string, err error) error {
	p := yamlstrict.Problems(err)[0]
	return &Error{File: name, Line: p.Line, Msg: explain(p)}
}

// explain rewords yaml.v3's Go-flavoured messages for someone editing YAML.
func explain(p yamlstrict.Problem) string {
	if p.Field != "" {
		return fmt.Sprintf("unknown field %q in %s; check the spelling (see examples/bursar.yaml)", p.Field, typeWord(p.Type))
	}
	if strings.Contains(p.Msg, "time.Duration") {
		return p.Msg + " (want a duration like 90s, 4m or 1h30m)"
	}
	if strings.HasPrefix(p.Msg, "parsing time") {
		return p.Msg + " (want an RFC 3339 time like 2026-12-04T06:00:00Z)"
	}
	return p.Msg
}

func typeWord(goType string) string {
	_, t, _ := strings.Cut(goType, ".")
	if t == "" {
		t = goType
	}
	return "a " + strings.ToLower(t)
}

// pathError is a check failure at a path of keys and indices.
type pathError struct {
	path []any
	msg  string
}

func (e *pathError) Error() string { return e.field() + ": " + e.msg }

func (e *pathError) field() string {
	var b strings.Builder
	for _, p := range e.path {
		switch v := p.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", v)
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(v)
		}
	}
	return b.String()
}

func fail(msg string, path ...any) error { return &pathError{path: path, msg: msg} }
