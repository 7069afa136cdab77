package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// Encode stamps the envelope, validates the event and returns its JSON: the bytes json.Marshal
// writes for it, written without reflection.
func Encode(e Event) ([]byte, error) {
	Stamp(e)
	if p, ok := e.(*PlanDecided); ok && p.Actions == nil {
		p.Actions = []PlanAction{} // an empty plan is [] on the wire, never null
	}
	if err := Validate(e); err != nil {
		return nil, err
	}
	if data, ok := appendEvent(make([]byte, 0, 512), e); ok {
		return data, nil
	}
	return json.Marshal(e) // what appendEvent cannot write, with encoding/json's own error
}

// Decode parses one event, rejecting unknown types, unknown major versions, missing required
// fields and out-of-range values. Unknown fields are ignored: a newer minor version may add them.
//
// What Encode writes is read in one pass (decodePlain); any other document, and every one that
// is rejected, goes through decodeGeneral, whose errors say what is wrong and where.
func Decode(data []byte) (Event, error) {
	if e := decodePlain(data); e != nil && Validate(e) == nil {
		return e, nil
	}
	return decodeGeneral(data)
}

// decodePlain decodes the shape Encode writes, in one pass and without reflection: an object
// whose first member is "type", whose other keys are that type's own, each once, with no null
// and no escape in any string. It returns nil for anything else, even a valid event, which
// decodeGeneral then reads. It never accepts what decodeGeneral rejects, nor reads a document
// differently (FuzzDecodePaths checks both).
func decodePlain(data []byte) Event {
	s := scanner{b: data}
	if !s.byte('{') {
		return nil
	}
	if k, ok := s.key(); !ok || string(k) != "type" {
		return nil
	}
	name, ok := s.str()
	if !ok {
		return nil
	}
	e := New(typeNamed(name))
	if e == nil {
		return nil
	}
	var buf [maxMembers]member
	ms := membersOf(e, buf[:0])
	m := e.Header()
	m.Type = e.EventType()
	seen, ok := s.rest(ms, 1, false) // bit 0: "type", the envelope's first member
	if !ok || !s.end() || !sentRequired(ms, seen) {
		return nil
	}
	if n, err := major(m.Version); err != nil || n != 1 {
		return nil
	}
	return e
}

// typeNamed returns the known type spelled name, or "".
func typeNamed(name []byte) Type {
	for _, t := range Types {
		if string(t) == string(name) {
			return t
		}
	}
	return ""
}

// sentRequired reports whether every member without omitempty is in the bit set seen.
func sentRequired(ms []member, seen uint64) bool {
	for i, m := range ms {
		if !m.omitEmpty && seen&(1<<i) == 0 {
			return false
		}
	}
	return true
}

// decodeGeneral decodes any document encoding/json reads, and explains a rejection: the type,
// the version, then each required field, are checked on a first parse into raw members, so the
// error names what is missing before the second parse into the event says what is malformed.
func decodeGeneral(data []byte) (Event, error) {
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

// requiredFields lists the JSON names of an event's members without omitempty: the fields a
// producer must always send, in the order of the struct. The JSON Schemas' "required" lists are
// tested against the struct tags, and the member lists against the same tags.
func requiredFields(e Event) []string {
	var buf [maxMembers]member
	var names []string
	for _, m := range membersOf(e, buf[:0]) {
		if !m.omitEmpty {
			names = append(names, m.name)
		}
	}
	return names
}
