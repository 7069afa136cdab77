// Package yamlstrict decodes config files strictly, a field the Go type does not have being an
// error, and turns yaml.v3's errors into problems with their line numbers. Every config parser
// (bursar.yaml, collector.yaml and its prices section) uses it, so all of them refuse the same
// typos and point at a line the same way; each still words its own messages.
package yamlstrict

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Unmarshal decodes the first document of data into v, refusing fields v does not have. An
// empty document returns io.EOF, as yaml.v3's Decoder does, so the caller decides whether an
// empty file is allowed.
func Unmarshal(data []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	return dec.Decode(v)
}

// DecodeNode decodes n (a part of a file read into a yaml.Node) into v as strictly as Unmarshal,
// with the lines in its errors counted in the file n came from. yaml.v3's Node.Decode has no
// strict mode, so n is re-encoded and decoded again, below as many blank lines as n sits down
// the file. The re-encoded node keeps n's style and comments, so its lines are the file's, but
// for blank lines inside n, which are lost (a problem after one is reported a line early).
func DecodeNode(n *yaml.Node, v any) error {
	b, err := yaml.Marshal(n)
	if err != nil {
		return fmt.Errorf("re-encoding the node at line %d: %w", n.Line, err)
	}
	pad := bytes.Repeat([]byte("\n"), max(n.Line-1, 0))
	return Unmarshal(append(pad, b...), v)
}

// Problem is one thing yaml.v3 refused.
type Problem struct {
	Line int    // in the document, from 1; 0 when yaml.v3 named no line
	Msg  string // yaml.v3's words without its "yaml: " and "line N: " framing
	// Field and Type are set when the problem is a field the Go type does not have
	// ("field regoin not found in type fleet.Location"): the field as written and the Go type.
	Field string
	Type  string
}

// At formats the problem as "file:line: msg", or "file: msg" when it has no line.
func (p Problem) At(file string) string {
	if p.Line > 0 {
		return file + ":" + strconv.Itoa(p.Line) + ": " + p.Msg
	}
	return file + ": " + p.Msg
}

var (
	lineMsg      = regexp.MustCompile(`(?s)^line (\d+): (.*)$`)
	unknownField = regexp.MustCompile(`^field (\S+) not found in type (\S+)$`)
)

// Problems splits an error from yaml.v3 into its problems: one for a syntax error ("yaml: line
// 3: ..."), one per message of a *yaml.TypeError. Any other error is one problem with no line.
func Problems(err error) []Problem {
	if err == nil {
		return nil
	}
	msgs := []string{strings.TrimPrefix(err.Error(), "yaml: ")}
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msgs = te.Errors
	}
	out := make([]Problem, len(msgs))
	for i, m := range msgs {
		p := Problem{Msg: m}
		if sub := lineMsg.FindStringSubmatch(m); sub != nil {
			p.Line, _ = strconv.Atoi(sub[1])
			p.Msg = sub[2]
		}
		if sub := unknownField.FindStringSubmatch(p.Msg); sub != nil {
			p.Field, p.Type = sub[1], sub[2]
		}
		out[i] = p
	}
	return out
}

// Message is err's problems without their lines, joined by "; ", for a caller that names the
// line itself.
func Message(err error) string {
	ps := Problems(err)
	msgs := make([]string, len(ps))
	for i, p := range ps {
		msgs[i] = p.Msg
	}
	return strings.Join(msgs, "; ")
}

// Error formats every problem of err with At, one per line.
func Error(file string, err error) error {
	ps := Problems(err)
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.At(file)
	}
	return errors.New(strings.Join(lines, "\n"))
}

var pathPart = regexp.MustCompile(`[^.\[\]]+|\[\d+\]`)

// Line is the line of the deepest part of path (such as "workloads[1].replicas.min") that n
// holds: a mapping entry's key line, a sequence item's line, and n's own line when it holds none
// of it, so a check that fails on a missing field points at the section that lacks it. n may be
// a document node or any node under it; a nil n (an empty file) is line 1.
func Line(n *yaml.Node, path string) int {
	if n == nil {
		return 1
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, part := range pathPart.FindAllString(path, -1) {
		next, at := child(n, part)
		if next == nil {
			break
		}
		n, line = next, at
	}
	return line
}

// child is the node under n that part ("key" or "[i]") names, and the line that names it.
func child(n *yaml.Node, part string) (*yaml.Node, int) {
	switch {
	case strings.HasPrefix(part, "["):
		i, _ := strconv.Atoi(strings.Trim(part, "[]"))
		if n.Kind == yaml.SequenceNode && i < len(n.Content) {
			return n.Content[i], n.Content[i].Line
		}
	case n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == part {
				return n.Content[i+1], n.Content[i].Line
			}
		}
	}
	return nil, 0
}
