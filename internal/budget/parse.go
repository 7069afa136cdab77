package budget

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/bursar-dev/bursar/internal/yamlstrict"
)

// ParseFile reads policies kept in git: one policy per YAML document, or a document holding a
// list of them. Unknown keys are refused, every policy is normalized and validated, and each
// error names the file, the line and the field:
//
//	name: llm-monthly
//	scope: workload=llm-inference
//	period: month
//	limit: 50000
//	currency: USD
//	thresholds:
//	  - {at: 80%}
//	  - {at: 100%, on: forecast}
//	  - {at: 100%, action: block-scale-up}
//	approve_over: 25/h
//	restore: first
//	approvers: [U123ABC]
//	approval_timeout: 30m
//	remedies: [fallback]
func ParseFile(file string, data []byte) ([]Policy, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []Policy
	var errs []error
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if len(doc.Content) == 0 {
			continue
		}
		root := doc.Content[0]
		items := []*yaml.Node{root}
		if root.Kind == yaml.SequenceNode {
			items = root.Content
		}
		for _, n := range items {
			p, err := decodePolicy(file, n)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out = append(out, p)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no budget policy found: want a YAML mapping with name, scope, period, limit, currency and thresholds", file)
	}
	return out, nil
}

// lines remembers where each field of one policy was written.
type lines struct {
	file string
	doc  int
	at   map[string]int
}

// of is the line of field, or of the nearest enclosing field that has one.
func (l lines) of(field string) int {
	for f := field; f != ""; {
		if n, ok := l.at[f]; ok {
			return n
		}
		i := strings.LastIndexAny(f, ".[")
		if i < 0 {
			break
		}
		f = f[:i]
	}
	return l.doc
}

func (l lines) errf(field, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s: %s", l.file, l.of(field), field, fmt.Sprintf(format, args...))
}

func decodePolicy(file string, n *yaml.Node) (Policy, error) {
	l := lines{file: file, doc: n.Line, at: map[string]int{}}
	var p Policy
	if n.Kind != yaml.MappingNode {
		return p, fmt.Errorf("%s:%d: a budget policy must be a mapping (name: ..., scope: ...)", file, n.Line)
	}
	var errs []error
	failed := map[string]bool{} // fields that did not decode: their zero value is no news
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i].Value, n.Content[i+1]
		l.at[key] = n.Content[i].Line
		if err := decodeField(&p, key, val, l); err != nil {
			errs = append(errs, err)
			failed[key] = true
		}
	}
	p.defaults()
	var inv *InvalidError
	if errors.As(p.Validate(), &inv) {
		for _, pr := range inv.Problems {
			if !failed[strings.FieldsFunc(pr.Field, func(r rune) bool { return r == '.' || r == '[' })[0]] {
				errs = append(errs, l.errf(pr.Field, "budget policy %q: %s", p.Name, pr.Reason))
			}
		}
	}
	p.sort()
	return p, errors.Join(errs...)
}

func decodeField(p *Policy, key string, val *yaml.Node, l lines) error {
	var target any
	switch key {
	case "name":
		target = &p.Name
	case "scope":
		target = &p.Scope
	case "period":
		target = &p.Period
	case "limit":
		target = &p.Limit
	case "currency":
		target = &p.Currency
	case "approve_over":
		target = &p.ApproveOver
	case "restore":
		target = &p.Restore
	case "approvers":
		target = &p.Approvers
	case "approval_timeout":
		target = &p.ApprovalTimeout
	case "remedies":
		target = &p.Remedies
	case "thresholds":
		return decodeThresholds(p, val, l)
	default:
		return l.errf(key, "unknown key (keys: name, scope, period, limit, currency, thresholds, approve_over, restore, approvers, approval_timeout, remedies)")
	}
	if err := val.Decode(target); err != nil {
		return l.errf(key, "%s", yamlstrict.Message(err))
	}
	return nil
}

func decodeThresholds(p *Policy, val *yaml.Node, l lines) error {
	if val.Kind != yaml.SequenceNode {
		return l.errf("thresholds", "must be a list of {at: 80%%, on: actual|forecast, action: notify|require-approval|block-scale-up|scale-to-floor}")
	}
	var errs []error
	for i, item := range val.Content {
		field := fmt.Sprintf("thresholds[%d]", i)
		l.at[field] = item.Line
		var t Threshold
		if item.Kind != yaml.MappingNode {
			errs = append(errs, l.errf(field, "must be a mapping like {at: 80%%}"))
			continue
		}
		for j := 0; j+1 < len(item.Content); j += 2 {
			key, v := item.Content[j].Value, item.Content[j+1]
			l.at[field+"."+key] = item.Content[j].Line
			var target any
			switch key {
			case "at":
				target = &t.At
			case "on":
				target = &t.On
			case "action":
				target = &t.Action
			default:
				errs = append(errs, l.errf(field+"."+key, "unknown key (keys: at, on, action)"))
				continue
			}
			if err := v.Decode(target); err != nil {
				errs = append(errs, l.errf(field+"."+key, "%s", yamlstrict.Message(err)))
			}
		}
		p.Thresholds = append(p.Thresholds, t)
	}
	return errors.Join(errs...)
}
