package promtest

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// decodeResult reads the "result" of an instant query: a vector
// ([{"metric": {...}, "value": [ts, "v"]}]) or a scalar ([ts, "v"]). Values are strings in the
// API ("NaN" and "+Inf" among them), so they are parsed here.
func decodeResult(resultType string, raw json.RawMessage) ([]Sample, error) {
	switch resultType {
	case "vector":
		var vec []struct {
			Metric map[string]string `json:"metric"`
			Value  []json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal(raw, &vec); err != nil {
			return nil, fmt.Errorf("decoding a vector: %w", err)
		}
		out := make([]Sample, 0, len(vec))
		for i, s := range vec {
			v, err := pointValue(s.Value)
			if err != nil {
				return nil, fmt.Errorf("sample %d: %w", i, err)
			}
			out = append(out, Sample{Labels: s.Metric, Value: v})
		}
		return out, nil
	case "scalar":
		var p []json.RawMessage
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, fmt.Errorf("decoding a scalar: %w", err)
		}
		v, err := pointValue(p)
		if err != nil {
			return nil, err
		}
		return []Sample{{Value: v}}, nil
	}
	return nil, fmt.Errorf("result type %q: want vector or scalar", resultType)
}

// pointValue reads a [timestamp, "value"] pair's value.
func pointValue(p []json.RawMessage) (float64, error) {
	if len(p) != 2 {
		return 0, fmt.Errorf("a point has %d elements, want [timestamp, \"value\"]", len(p))
	}
	var s string
	if err := json.Unmarshal(p[1], &s); err != nil {
		return 0, fmt.Errorf("a point's value %s is not a string: %w", p[1], err)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("a point's value %q is not a number", s)
	}
	return v, nil
}
