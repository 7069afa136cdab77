// Package yamlstrict decodes config files strictly, a field the Go type does not have being an
// error, and reports each problem at the line and column of the node it is about. Every config
// parser (bursar.yaml, collector.yaml and its prices section) uses it, so all of them refuse
// the same typos and point at a line the same way; each still words its own messages.
//
// The file is read into a yaml.Node and walked beside the Go type, so positions come from the
// nodes, never from the decoder's error text; only a syntax error, which has no node, carries
// its line in the parser's message.
package yamlstrict

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Unmarshal decodes the first document of data into v, refusing fields v does not have. An
// empty document returns io.EOF, as yaml's Decoder does, so the caller decides whether an
// empty file is allowed. Its other errors hold Problems.
func Unmarshal(data []byte, v any) error {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return err
		}
		return &DecodeError{Problems: foreign(err)}
	}
	n := &doc
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	return DecodeNode(n, v)
}

// DecodeNode decodes n (a part of a file read into a yaml.Node) into v as strictly as
// Unmarshal, with the lines in its problems those of the file n came from.
func DecodeNode(n *yaml.Node, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("yamlstrict: decoding into %T, want a non-nil pointer", v)
	}
	if ps := check(n, rv.Type().Elem()); len(ps) > 0 {
		return &DecodeError{Problems: ps}
	}
	if err := n.Decode(v); err != nil {
		return &DecodeError{Problems: foreign(err)} // what the walk does not model: aliases, anchors
	}
	return nil
}

// DecodeError is what Unmarshal and DecodeNode refused, one Problem each.
type DecodeError struct{ Problems []Problem }

func (e *DecodeError) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.At("yaml")
	}
	return strings.Join(msgs, "; ")
}

// Problem is one thing the decoder refused.
type Problem struct {
	Line, Column int    // in the document, from 1; 0 when unknown
	Msg          string // what was wrong, without a position
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

// Problems is err's problems: those of a *DecodeError, or, for an error straight from yaml (a
// Node.Decode a caller made itself), one per message of it.
func Problems(err error) []Problem {
	if err == nil {
		return nil
	}
	var e *DecodeError
	if errors.As(err, &e) {
		return e.Problems
	}
	return foreign(err)
}

// foreign splits an error from yaml itself into problems: one for a syntax error ("yaml: line
// 3: ..."), one per message of a *yaml.TypeError. The parser has no node to give a position,
// so the line is read from the "line N: " its messages start with, when they do.
func foreign(err error) []Problem {
	msgs := []string{strings.TrimPrefix(err.Error(), "yaml: ")}
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msgs = te.Errors
	}
	out := make([]Problem, len(msgs))
	for i, m := range msgs {
		out[i] = Problem{Msg: m}
		if rest, ok := strings.CutPrefix(m, "line "); ok {
			num, msg, ok := strings.Cut(rest, ": ")
			if line, err := strconv.Atoi(num); ok && err == nil && line > 0 {
				out[i].Line, out[i].Msg = line, msg
			}
		}
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
