package slacktest

import (
	"encoding/json"
	"slices"
)

// Texts returns every "text" string in Block Kit JSON (a message's blocks as Slack receives
// them), in document order with object keys sorted, so tests can check what a reader would see.
func Texts(blocks []byte) ([]string, error) {
	var v any
	if err := json.Unmarshal(blocks, &v); err != nil {
		return nil, err
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if s, ok := v["text"].(string); ok {
				out = append(out, s)
			}
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				walk(v[k])
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(v)
	return out, nil
}
