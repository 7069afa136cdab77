package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// Sentinel errors, for errors.Is on what Decode and Validate return.
var (
	ErrMalformed     = errors.New("malformed event")
	ErrUnknownType   = errors.New("unknown event type")
	ErrVersion       = errors.New("unsupported event version")
	ErrMissingField  = errors.New("missing required field")
	ErrOutOfRange    = errors.New("value out of range")
	errVersionFormat = errors.New(`version must look like "1" or "1.2"`)
)

// Error is a decoding or validation failure that names the event type and the field.
type Error struct {
	Type   Type   // empty when the type itself could not be read
	Field  string // empty when the problem is the whole document
	Err    error  // one of the sentinels above
	Detail string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("event")
	if e.Type != "" {
		b.WriteString(" " + string(e.Type))
	}
	if e.Field != "" {
		b.WriteString(": field " + strconv.Quote(e.Field))
	}
	b.WriteString(": " + e.Err.Error())
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Encode stamps the envelope, validates the event and returns its JSON.
func Encode(e Event) ([]byte, error) {
	Stamp(e)
	if p, ok := e.(*PlanDecided); ok && p.Actions == nil {
		p.Actions = []PlanAction{} // an empty plan is [] on the wire, never null
	}
	if err := Validate(e); err != nil {
		return nil, err
	}
	return json.Marshal(e)
}

// Decode parses one event, rejecting unknown types, unknown major versions, missing required
// fields and out-of-range values. Unknown fields are ignored: a newer minor version may add them.
func Decode(data []byte) (Event, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, &Error{Err: ErrMalformed, Detail: err.Error()}
	}
	var typeName string
	if err := decodeField(raw, "type", &typeName); err != nil {
		return nil, err
	}
	t := Type(typeName)
	e := New(t)
	if e == nil {
		return nil, &Error{Field: "type", Err: ErrUnknownType, Detail: strconv.Quote(string(t))}
	}
	var version string
	if err := decodeField(raw, "version", &version); err != nil {
		err.Type = t
		return nil, err
	}
	if m, err := major(version); err != nil || m != 1 {
		return nil, &Error{Type: t, Field: "version", Err: ErrVersion,
			Detail: fmt.Sprintf("got %q, this build reads major version 1", version)}
	}
	for _, f := range requiredFields(e) {
		if v, ok := raw[f]; !ok || bytes.Equal(v, []byte("null")) {
			return nil, &Error{Type: t, Field: f, Err: ErrMissingField}
		}
	}
	if err := json.Unmarshal(data, e); err != nil {
		return nil, &Error{Type: t, Field: jsonField(err), Err: ErrMalformed, Detail: err.Error()}
	}
	if err := Validate(e); err != nil {
		return nil, err
	}
	return e, nil
}

func decodeField(raw map[string]json.RawMessage, name string, into *string) *Error {
	v, ok := raw[name]
	if !ok {
		return &Error{Field: name, Err: ErrMissingField}
	}
	if err := json.Unmarshal(v, into); err != nil {
		return &Error{Field: name, Err: ErrMalformed, Detail: "must be a string"}
	}
	return nil
}

func jsonField(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return te.Field
	}
	return ""
}

func major(v string) (int, error) {
	head, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(head)
	if err != nil || n < 0 {
		return 0, errVersionFormat
	}
	return n, nil
}

var required sync.Map // reflect.Type -> []string

// requiredFields lists the JSON names of an event's fields without omitempty: the fields a
// producer must always send. The JSON Schemas' "required" lists are tested against this.
func requiredFields(e Event) []string {
	rt := reflect.TypeOf(e).Elem()
	if v, ok := required.Load(rt); ok {
		return v.([]string)
	}
	names := jsonFields(rt, true)
	required.Store(rt, names)
	return names
}

// jsonFields lists a struct's JSON field names, flattening embedded structs; only those without
// omitempty when onlyRequired is set.
func jsonFields(rt reflect.Type, onlyRequired bool) []string {
	var names []string
	for i := range rt.NumField() {
		f := rt.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			names = append(names, jsonFields(f.Type, onlyRequired)...)
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		if onlyRequired && strings.Contains(opts, "omitempty") {
			continue
		}
		names = append(names, name)
	}
	return names
}
