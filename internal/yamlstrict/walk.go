package yamlstrict

import (
	"encoding"
	"fmt"
	"maps"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

var (
	nodeType          = reflect.TypeFor[yaml.Node]()
	unmarshalerType   = reflect.TypeFor[yaml.Unmarshaler]()
	textUnmarshalType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// check walks n beside the Go type t it is to be decoded into and returns what the decoder
// would refuse, each at the node it is about: keys t has no field for, keys given twice, and
// values of the wrong type. Aliases are not followed (the decoder expands and bounds them); a
// value that decodes itself (a yaml.Unmarshaler, a yaml.Node) is decoded alone to check it.
func check(n *yaml.Node, t reflect.Type) []Problem {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case n.Kind == yaml.AliasNode || isNull(n) || t == nodeType:
		return nil
	case decodesItself(t):
		return decodeAlone(n, t)
	case n.Kind == yaml.MappingNode && t.Kind() != reflect.Struct && t.Kind() != reflect.Map:
		// The decoder refuses a mapping's repeated keys before it looks at the target type.
		if ps := duplicates(n); len(ps) > 0 {
			return ps
		}
	}
	switch t.Kind() {
	case reflect.Interface:
		var out []Problem // any value fits; only repeated keys further in are refused
		for _, c := range n.Content {
			out = append(out, check(c, t)...)
		}
		return out
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return []Problem{mismatch(n, t)}
		}
		return checkStruct(n, t)
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return []Problem{mismatch(n, t)}
		}
		return checkMap(n, t)
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 && n.Kind == yaml.ScalarNode {
				return decodeAlone(n, t) // []byte from a string or !!binary
			}
			return []Problem{mismatch(n, t)}
		}
		var out []Problem
		for _, item := range n.Content {
			out = append(out, check(item, t.Elem())...)
		}
		return out
	}
	if n.Kind != yaml.ScalarNode {
		return []Problem{mismatch(n, t)}
	}
	return decodeAlone(n, t)
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

func decodesItself(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.Implements(unmarshalerType) || p.Implements(textUnmarshalType)
}

// decodeAlone decodes n into a new t: the decoder itself says whether the value fits.
func decodeAlone(n *yaml.Node, t reflect.Type) []Problem {
	err := n.Decode(reflect.New(t).Interface())
	if err == nil {
		return nil
	}
	if decodesItself(t) {
		// The type's own words, positioned by the decoder where it says, else at n.
		ps := foreign(err)
		for i := range ps {
			if ps[i].Line == 0 {
				ps[i].Line, ps[i].Column = n.Line, n.Column
			}
		}
		return ps
	}
	return []Problem{mismatch(n, t)}
}

// mismatch is a value of the wrong type, in the decoder's words.
func mismatch(n *yaml.Node, t reflect.Type) Problem {
	tag, value := n.ShortTag(), ""
	if tag != "!!seq" && tag != "!!map" {
		value = n.Value
		if len(value) > 10 {
			value = value[:7] + "..."
		}
		value = " `" + value + "`"
	}
	return at(n, fmt.Sprintf("cannot unmarshal %s%s into %s", tag, value, t))
}

func at(n *yaml.Node, msg string) Problem { return Problem{Line: n.Line, Column: n.Column, Msg: msg} }

// duplicates reports keys of mapping n given more than once.
func duplicates(n *yaml.Node) []Problem {
	var out []Problem
	for i := 0; i < len(n.Content); i += 2 {
		ki := n.Content[i]
		for j := i + 2; j < len(n.Content); j += 2 {
			if kj := n.Content[j]; kj.Kind == ki.Kind && kj.Value == ki.Value {
				out = append(out, at(kj, fmt.Sprintf("mapping key %q already defined at line %d", kj.Value, ki.Line)))
			}
		}
	}
	return out
}

func checkMap(n *yaml.Node, t reflect.Type) []Problem {
	if ps := duplicates(n); len(ps) > 0 {
		return ps
	}
	var out []Problem
	for i := 0; i+1 < len(n.Content); i += 2 {
		if isMerge(n.Content[i]) {
			out = append(out, checkMerge(n.Content[i+1], t)...)
			continue
		}
		out = append(out, check(n.Content[i], t.Key())...)
		out = append(out, check(n.Content[i+1], t.Elem())...)
	}
	return out
}

func checkStruct(n *yaml.Node, t reflect.Type) []Problem {
	if ps := duplicates(n); len(ps) > 0 {
		return ps
	}
	fields, rest := structFields(t)
	var out []Problem
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if isMerge(k) {
			out = append(out, checkMerge(v, t)...)
			continue
		}
		switch ft, ok := fields[k.Value]; {
		case isNull(k): // the decoder skips a null key
		case k.Kind != yaml.ScalarNode:
			out = append(out, mismatch(k, reflect.TypeFor[string]()))
		case ok:
			out = append(out, check(v, ft)...)
		case rest != nil:
			out = append(out, check(v, rest)...)
		default:
			p := at(k, fmt.Sprintf("field %s not found in type %s", k.Value, t))
			p.Field, p.Type = k.Value, t.String()
			out = append(out, p)
		}
	}
	return out
}

func isMerge(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && (k.Tag == "" || k.Tag == "!" || k.ShortTag() == "!!merge")
}

// checkMerge checks the maps a merge key ("<<: *base") brings into a mapping of type t.
func checkMerge(v *yaml.Node, t reflect.Type) []Problem {
	if v.Kind != yaml.SequenceNode {
		return check(v, t)
	}
	var out []Problem
	for _, item := range v.Content {
		out = append(out, check(item, t)...)
	}
	return out
}

// structFields maps the keys a struct accepts to their types, the way the decoder names them
// (the yaml tag's name, else the lowercased field name; "-" skipped; ",inline" flattened), and
// returns the element type of an inline map, which takes every other key.
func structFields(t reflect.Type) (map[string]reflect.Type, reflect.Type) {
	fields := map[string]reflect.Type{}
	var rest reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		if f.PkgPath != "" && !f.Anonymous {
			continue
		}
		tag := f.Tag.Get("yaml")
		if tag == "" && !strings.Contains(string(f.Tag), ":") {
			tag = string(f.Tag)
		}
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(","+opts+",", ",inline,") {
			ft := f.Type
			switch {
			case ft.Kind() == reflect.Map:
				rest = ft.Elem()
			case ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct:
				ft = ft.Elem()
				fallthrough
			case ft.Kind() == reflect.Struct && decodesItself(ft):
				rest = reflect.TypeFor[any]() // it reads the whole mapping itself: any key goes
			case ft.Kind() == reflect.Struct:
				sub, subRest := structFields(ft)
				maps.Copy(fields, sub)
				if rest == nil {
					rest = subRest
				}
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fields[name] = f.Type
	}
	return fields, rest
}
