package pricesource

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// The JSON decoders of the HTTP sources walk a body token by token: json.Decoder.Decode buffers
// a whole value first, so decoding a page as one struct holds the page (and more) in memory.
// Walking the top-level object and decoding one array element at a time keeps only one
// element in memory, whatever the size of the body.

// jsonFields maps the keys of an object a decoder wants to the function that reads the value.
type jsonFields map[string]func(dec *json.Decoder) error

// walkObject reads one JSON object from dec, calling fields[key] for each wanted key and
// skipping the rest. It returns the keys it saw, so that the caller can check the shape, and
// fails when the body holds anything but one object. want describes the expected document
// for the error message.
func walkObject(dec *json.Decoder, want string, fields jsonFields) (map[string]bool, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("want %s, got %s", want, describeTokenErr(err))
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("want %s, got %s", want, describeToken(tok))
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		seen[key] = true
		read, ok := fields[key]
		if !ok {
			read = skipValue
		}
		if err := read(dec); err != nil {
			return nil, fmt.Errorf("field %q: %w", key, err)
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("want %s, got data after the JSON object", want)
	}
	return seen, nil
}

// walkArray reads a JSON array from dec, calling each for every element in turn (each decodes
// it, usually with dec.Decode). A null counts as an empty array; present says which it was.
func walkArray(dec *json.Decoder, each func(i int, dec *json.Decoder) error) (present bool, err error) {
	tok, err := dec.Token()
	if err != nil {
		return false, err
	}
	if tok == nil {
		return false, nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return false, fmt.Errorf("want an array, got %s", describeToken(tok))
	}
	for i := 0; dec.More(); i++ {
		if err := each(i, dec); err != nil {
			return true, fmt.Errorf("element %d: %w", i, err)
		}
	}
	_, err = dec.Token() // the closing bracket
	return true, err
}

// readString reads a string value into s; null leaves it empty.
func readString(s *string) func(*json.Decoder) error {
	return func(dec *json.Decoder) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch v := tok.(type) {
		case string:
			*s = v
		case nil:
		default:
			return fmt.Errorf("want a string, got %s", describeToken(tok))
		}
		return nil
	}
}

// skipValue consumes one value of any kind, token by token.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				depth++
			default:
				depth--
			}
		}
		if depth == 0 {
			return nil
		}
	}
}

// missing is the error for a document without a key its decoder needs.
func missing(want string, seen map[string]bool) error {
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	got := "an empty object"
	if len(keys) > 0 {
		if len(keys) > 8 {
			keys = append(keys[:8], "...")
		}
		got = "an object with keys " + strings.Join(keys, ", ")
	}
	return fmt.Errorf("want %s, got %s", want, got)
}

func describeToken(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '[' {
			return "a JSON array"
		}
		return fmt.Sprintf("%q", string(v))
	case string:
		return "a JSON string"
	case nil:
		return "null"
	case bool:
		return "a JSON boolean"
	}
	return "a JSON number"
}

func describeTokenErr(err error) string {
	if errors.Is(err, io.EOF) {
		return "an empty body"
	}
	var se *json.SyntaxError
	if errors.As(err, &se) && se.Offset <= 1 {
		return "a body that is not JSON (" + err.Error() + "; an HTML or error page?)"
	}
	return err.Error()
}
