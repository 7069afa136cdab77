package report

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/bursar-dev/bursar/internal/events"
)

// usageRow is one row of the cost rollup summed to a step, as rollupUsage queries it.
type usageRow struct {
	keyRow
	Step         int64   `json:"step"`
	USD          float64 `json:"usd"`
	GPUHours     float64 `json:"gpu_hours"`
	ReplicaHours float64 `json:"replica_hours"`
}

// decodeUsageRows decodes the JSONEachRow lines of usageRow. A report by series reads a row per
// series and day (300,000 over 30 days of 10,000 series), and encoding/json's reflection was most
// of the time a page took, so the lines the engine writes (flat objects of these fields, plain
// ASCII strings, JSON numbers) are scanned here, their strings kept once; any other line is
// left to encoding/json, which gives the same row or the error.
func decodeUsageRows(out []byte) ([]usageRow, error) {
	var rows []usageRow
	names := map[string]string{}
	for line := range bytes.SplitSeq(bytes.TrimSpace(out), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r usageRow
		if !scanUsageRow(line, &r, names) {
			r = usageRow{}
			if err := json.Unmarshal(line, &r); err != nil {
				return nil, fmt.Errorf("decoding a result row %.200q: %w", line, err)
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// scanUsageRow reads a line that is a flat JSON object of usageRow's fields, each named exactly
// as its tag, into r, with the events package's scanner (the one JSON scanner), and reports
// whether it could; strings are looked up in names, so a workload's name is one string however
// many rows carry it.
func scanUsageRow(line []byte, r *usageRow, names map[string]string) bool {
	s := events.NewScanner(line)
	if !s.Byte('{') {
		return false
	}
	if s.Byte('}') {
		return s.End()
	}
	for {
		key, ok := s.Key()
		if !ok || !usageField(&s, key, r, names) {
			return false
		}
		if s.Byte('}') {
			return s.End()
		}
		if !s.Byte(',') {
			return false
		}
	}
}

// usageField reads the value of the field named key into r.
func usageField(s *events.Scanner, key []byte, r *usageRow, names map[string]string) bool {
	var dst *string
	switch string(key) {
	case "workload":
		dst = &r.Workload
	case "location":
		dst = &r.Location
	case "provider":
		dst = &r.Provider
	case "market":
		dst = &r.Market
	case "gpu":
		dst = &r.GPU
	case "step":
		return s.Int64(&r.Step)
	case "usd":
		return s.Float64(&r.USD)
	case "gpu_hours":
		return s.Float64(&r.GPUHours)
	case "replica_hours":
		return s.Float64(&r.ReplicaHours)
	default:
		return false // encoding/json matches names without regard to case
	}
	v, ok := s.Str()
	if !ok {
		return false
	}
	name, ok := names[string(v)]
	if !ok {
		name = string(v)
		names[name] = name
	}
	*dst = name
	return true
}
