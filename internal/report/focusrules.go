package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/bursar-dev/bursar/internal/billing"
)

// allocatedColumns are the split cost allocation columns FOCUS 1.3 keeps null on a charge that
// is not an allocated one (one without an AllocatedMethodId).
var allocatedColumns = []string{"AllocatedResourceId", "AllocatedResourceName", "AllocatedMethodDetails", "AllocatedTags"}

// rules13 are FOCUS 1.3's rules between a row's columns and inside its JSON object columns, for
// what 1.3 adds to 1.2: the allocation columns (FOCUS 1.3, AllocatedMethodId, AllocatedTags,
// AllocatedMethodDetails and its AllocatedMethodDetailsObject) and ContractApplied (its
// ContractAppliedObject).
func rules13(r billing.Record) (string, error) {
	if r["AllocatedMethodId"] == "" {
		for _, c := range allocatedColumns {
			if r[c] != "" {
				return c, errors.New("is set on a row without an AllocatedMethodId; FOCUS 1.3 keeps it null on a charge that is not a split cost allocation")
			}
		}
	}
	if v := r["AllocatedMethodDetails"]; v != "" {
		if _, err := allocationElements(v); err != nil {
			return "AllocatedMethodDetails", err
		}
	}
	if v := r["AllocatedTags"]; v != "" {
		if err := distinctTags(v, r["Tags"]); err != nil {
			return "AllocatedTags", err
		}
	}
	if v := r["ContractApplied"]; v != "" {
		if err := checkContractApplied(v); err != nil {
			return "ContractApplied", err
		}
	}
	return "", nil
}

// jsonObject decodes a JSON object cell keeping numbers as json.Number, so a number is told from
// a string that holds one.
func jsonObject(v string) (map[string]any, error) {
	dec := json.NewDecoder(strings.NewReader(v))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, fmt.Errorf("%.80q is not a JSON object", v)
	}
	if dec.More() {
		return nil, fmt.Errorf("%.80q holds more than one JSON value", v)
	}
	return m, nil
}

// jsonElements reads an object cell's "Elements" array of objects (the shape of FOCUS 1.3's
// AllocatedMethodDetails and ContractApplied); other top-level keys must be custom (x_).
func jsonElements(v string) ([]map[string]any, error) {
	m, err := jsonObject(v)
	if err != nil {
		return nil, err
	}
	for k := range m {
		if k != "Elements" && !strings.HasPrefix(k, "x_") {
			return nil, fmt.Errorf("key %q is neither Elements nor custom (x_)", k)
		}
	}
	list, ok := m["Elements"].([]any)
	if !ok || len(list) == 0 {
		return nil, errors.New(`has no "Elements" array of one or more objects`)
	}
	out := make([]map[string]any, len(list))
	for i, e := range list {
		if out[i], ok = e.(map[string]any); !ok {
			return nil, fmt.Errorf("Elements[%d] is not an object", i)
		}
	}
	return out, nil
}

// elemNumber reads an element's numeric key; ok is false when the key is absent or null.
func elemNumber(e map[string]any, key string, i int) (f float64, ok bool, err error) {
	switch x := e[key].(type) {
	case nil:
		return 0, false, nil
	case json.Number:
		f, err := x.Float64()
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return 0, false, fmt.Errorf("Elements[%d].%s %s is not a decimal number", i, key, x)
		}
		return f, true, nil
	}
	return 0, false, fmt.Errorf("Elements[%d].%s is %v, not a number", i, key, e[key])
}

// elemText reads an element's string key; ok is false when the key is absent or null.
func elemText(e map[string]any, key string, i int) (s string, ok bool, err error) {
	switch x := e[key].(type) {
	case nil:
		return "", false, nil
	case string:
		return x, x != "", nil
	}
	return "", false, fmt.Errorf("Elements[%d].%s is %v, not a string", i, key, e[key])
}

// customKeys checks that an element's keys other than known are custom (x_) and flat.
func customKeys(e map[string]any, i int, known ...string) error {
	for k, v := range e {
		if slices.Contains(known, k) {
			continue
		}
		if !strings.HasPrefix(k, "x_") {
			return fmt.Errorf("Elements[%d] key %q is not a FOCUS key (%s) nor custom (x_)", i, k, strings.Join(known, ", "))
		}
		switch v.(type) {
		case map[string]any, []any:
			return fmt.Errorf("Elements[%d].%s is nested; custom keys hold plain values", i, k)
		}
	}
	return nil
}

// allocation is one element of AllocatedMethodDetails.
type allocation struct {
	ratio float64
	unit  string
}

// allocationElements reads AllocatedMethodDetails: each element's AllocatedRatio (required, a
// share between 0 and 1), UsageUnit (required with a UsageQuantity) and UsageQuantity.
func allocationElements(v string) ([]allocation, error) {
	es, err := jsonElements(v)
	if err != nil {
		return nil, err
	}
	out := make([]allocation, len(es))
	for i, e := range es {
		if err := customKeys(e, i, "AllocatedRatio", "UsageUnit", "UsageQuantity"); err != nil {
			return nil, err
		}
		ratio, ok, err := elemNumber(e, "AllocatedRatio", i)
		if err != nil {
			return nil, err
		}
		if !ok || ratio < 0 || ratio > 1 {
			return nil, fmt.Errorf("Elements[%d].AllocatedRatio is %v; want the charge's share of the origin charge, 0 to 1", i, e["AllocatedRatio"])
		}
		_, hasQty, err := elemNumber(e, "UsageQuantity", i)
		if err != nil {
			return nil, err
		}
		unit, hasUnit, err := elemText(e, "UsageUnit", i)
		if err != nil {
			return nil, err
		}
		if hasQty && !hasUnit {
			return nil, fmt.Errorf("Elements[%d] has a UsageQuantity without its UsageUnit", i)
		}
		out[i] = allocation{ratio, unit}
	}
	return out, nil
}

// distinctTags checks that AllocatedTags holds no key Tags holds: FOCUS 1.3 puts a tag in one of
// them, the allocated resource's own tags in AllocatedTags.
func distinctTags(allocated, tags string) error {
	a, err := jsonObject(allocated)
	if err != nil {
		return err
	}
	if tags == "" {
		return nil
	}
	t, err := jsonObject(tags)
	if err != nil {
		return nil // Tags' own check reports it
	}
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, ok := t[k]; ok {
			return fmt.Errorf("holds tag %q, which Tags holds too", k)
		}
	}
	return nil
}

// contractKeys are the keys of a ContractApplied element (FOCUS 1.3 spells the ids ID).
var contractKeys = []string{"ContractID", "ContractCommitmentID", "ContractCommitmentAppliedCost",
	"ContractCommitmentAppliedQuantity", "ContractCommitmentAppliedUnit"}

// checkContractApplied checks ContractApplied: each element names its contract and commitment,
// and applies a cost, a quantity with its unit, or both.
func checkContractApplied(v string) error {
	es, err := jsonElements(v)
	if err != nil {
		return err
	}
	for i, e := range es {
		if err := customKeys(e, i, contractKeys...); err != nil {
			return err
		}
		for _, k := range contractKeys[:2] {
			_, ok, err := elemText(e, k, i)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("Elements[%d].%s is missing or empty", i, k)
			}
		}
		_, hasCost, err := elemNumber(e, "ContractCommitmentAppliedCost", i)
		if err != nil {
			return err
		}
		_, hasQty, err := elemNumber(e, "ContractCommitmentAppliedQuantity", i)
		if err != nil {
			return err
		}
		_, hasUnit, err := elemText(e, "ContractCommitmentAppliedUnit", i)
		if err != nil {
			return err
		}
		switch {
		case hasQty != hasUnit:
			return fmt.Errorf("Elements[%d]: ContractCommitmentAppliedQuantity and ContractCommitmentAppliedUnit go together", i)
		case !hasCost && !hasQty:
			return fmt.Errorf("Elements[%d] applies neither a cost nor a quantity", i)
		}
	}
	return nil
}

// ratioSlack is how far the allocated ratios of one origin charge may add up from 1: they are
// written to 6 decimals.
const ratioSlack = 1e-5

// checkRatios checks the rule between rows: the AllocatedRatio of every allocated charge split
// from one origin charge (one resource, charge period and method), for each usage unit, adds up
// to 1. It returns the first row of a group that does not, 1-based.
func checkRatios(recs []billing.Record) (int, error) {
	type origin struct{ resource, start, end, method, unit string }
	sums := map[origin]float64{}
	first := map[origin]int{}
	for i, r := range recs {
		if r["AllocatedMethodId"] == "" || r["AllocatedMethodDetails"] == "" {
			continue
		}
		as, err := allocationElements(r["AllocatedMethodDetails"])
		if err != nil {
			return i + 1, err
		}
		for _, a := range as {
			k := origin{r["ResourceId"], r["ChargePeriodStart"], r["ChargePeriodEnd"], r["AllocatedMethodId"], a.unit}
			if _, ok := first[k]; !ok {
				first[k] = i + 1
			}
			sums[k] += a.ratio
		}
	}
	keys := make([]origin, 0, len(sums))
	for k := range sums {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return first[keys[i]] < first[keys[j]] })
	for _, k := range keys {
		if math.Abs(sums[k]-1) > ratioSlack {
			return first[k], fmt.Errorf("the AllocatedRatio of the charges split from resource %s over %s to %s add up to %v, not 1",
				k.resource, k.start, k.end, sums[k])
		}
	}
	return 0, nil
}

// compactJSON is v as one line of JSON, keys in order, for a cell.
func compactJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // maps of strings and numbers always encode
	return strings.TrimSuffix(b.String(), "\n")
}
