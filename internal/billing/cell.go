package billing

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// timeLayouts are the DateTime spellings providers write: ISO 8601 with Z or +00:00 (AWS, Azure)
// and BigQuery's "2026-11-01 00:00:00 UTC" (Google Cloud's FOCUS view exported as CSV).
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999 UTC", "2006-01-02T15:04:05.999999999 UTC"}

// parseTime reads a FOCUS DateTime, which the specification requires in UTC.
func parseTime(v string) (time.Time, error) {
	for _, l := range timeLayouts {
		t, err := time.Parse(l, v)
		if err != nil {
			continue
		}
		if _, off := t.Zone(); off != 0 {
			return time.Time{}, fmt.Errorf("%q is not UTC (offset %s); FOCUS times are UTC, e.g. 2026-11-01T00:00:00Z", v, t.Format("-07:00"))
		}
		return t.UTC(), nil
	}
	return time.Time{}, fmt.Errorf("%q is not a UTC date and time; want ISO 8601 with Z, e.g. 2026-11-01T00:00:00Z", v)
}

// parseDecimal reads a FOCUS Decimal.
func parseDecimal(v string) (float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%q is not a decimal number", v)
	}
	return f, nil
}

// parseObject reads a FOCUS JSON cell: an object of keys to values (strings or not).
func parseObject(v string) (map[string]string, error) {
	var m map[string]any
	if err := json.Unmarshal([]byte(v), &m); err != nil || m == nil {
		return nil, fmt.Errorf("%.80q is not a JSON object", v)
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		if s, ok := x.(string); ok {
			out[k] = s
			continue
		}
		b, _ := json.Marshal(x)
		out[k] = string(b)
	}
	return out, nil
}

// CheckCell checks one cell against its column's type, nullability and allowed values. An empty
// string is null.
func CheckCell(c Column, v string) error {
	if v == "" {
		if !c.Nullable {
			return fmt.Errorf("is empty, and %s must not be null", c.Name)
		}
		return nil
	}
	var err error
	switch c.Type {
	case Decimal:
		_, err = parseDecimal(v)
	case DateTime:
		_, err = parseTime(v)
	case JSON:
		_, err = parseObject(v)
	}
	if err != nil {
		return err
	}
	if len(c.Allowed) > 0 && !slices.Contains(c.Allowed, v) {
		return fmt.Errorf("%q is not allowed; want one of %s", v, strings.Join(c.Allowed, ", "))
	}
	if c.Name == "BillingCurrency" || c.Name == "PricingCurrency" {
		return checkCurrency(v)
	}
	return nil
}

// checkCurrency checks an ISO 4217 alphabetic code's form.
func checkCurrency(v string) error {
	if len(v) != 3 || strings.ToUpper(v) != v || strings.ContainsFunc(v, func(r rune) bool { return r < 'A' || r > 'Z' }) {
		return fmt.Errorf("%q is not an ISO 4217 currency code, e.g. USD", v)
	}
	return nil
}
