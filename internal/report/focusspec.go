package report

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/bursar-dev/bursar/internal/billing"
)

// FOCUSVersions are the FOCUS versions `report focus` writes, the default first.
var FOCUSVersions = []string{"1.3", billing.Version}

// ParseFOCUSVersion reads --focus-version: one of FOCUSVersions, as written there.
func ParseFOCUSVersion(s string) (string, error) {
	v := strings.TrimSpace(s)
	if slices.Contains(FOCUSVersions, v) {
		return v, nil
	}
	return "", fmt.Errorf("--focus-version %.40q: Bursar writes FOCUS %s (the default) or %s",
		s, FOCUSVersions[0], strings.Join(FOCUSVersions[1:], ", "))
}

// focus13Added are the columns FOCUS 1.3 adds to 1.2's table (billing.Columns), from the
// specification's column definitions (FOCUS 1.3, "Cost and Usage" dataset, columns
// AllocatedMethodDetails ... ServiceProviderName). 1.3 keeps every 1.2 column: ProviderName and
// PublisherName are deprecated in favour of ServiceProviderName and HostProviderName but still
// mandatory and not null until 1.4 removes them.
var focus13Added = []billing.Column{
	// Split cost allocation: a charge split among what shared it (FOCUS 1.3, "Allocated..." columns).
	{Name: "AllocatedMethodDetails", Type: billing.JSON, Level: billing.Recommended, Nullable: true},
	{Name: "AllocatedMethodId", Type: billing.String, Level: billing.Conditional, Nullable: true},
	{Name: "AllocatedResourceId", Type: billing.String, Level: billing.Conditional, Nullable: true},
	{Name: "AllocatedResourceName", Type: billing.String, Level: billing.Conditional, Nullable: true},
	{Name: "AllocatedTags", Type: billing.JSON, Level: billing.Conditional, Nullable: true},
	// Contract commitments applied to the charge (FOCUS 1.3, "Contract Applied").
	{Name: "ContractApplied", Type: billing.JSON, Level: billing.Conditional, Nullable: true},
	// The content constraints table says HostProviderName allows nulls, but its requirements say
	// it MUST NOT be null ("Not Applicable" where nothing hosts the service): the requirement wins.
	{Name: "HostProviderName", Type: billing.String, Level: billing.Mandatory},
	{Name: "ServiceProviderName", Type: billing.String, Level: billing.Mandatory},
}

// focusSpec is one FOCUS version: its column table, the rules between a row's columns beyond
// those billing.Check applies (the ones 1.2 and 1.3 share), and the columns the export writes
// beyond the mandatory ones.
type focusSpec struct {
	version string
	columns []billing.Column
	rules   func(billing.Record) (string, error)
	extra   []string
}

// focusSpecs are the versions the export writes, by name.
var focusSpecs = map[string]focusSpec{
	billing.Version: {version: billing.Version, columns: billing.Columns, extra: focusColumns,
		rules: func(billing.Record) (string, error) { return "", nil }},
	"1.3": {version: "1.3", columns: withColumns(billing.Columns, focus13Added), rules: rules13,
		extra: withNames(focusColumns, focus13Added)},
}

// withColumns is base and added in one table, in name order as the specification lists them.
func withColumns(base, added []billing.Column) []billing.Column {
	out := slices.Concat(base, added)
	slices.SortFunc(out, func(a, b billing.Column) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// withNames is the export's extra columns with the added non-mandatory ones among its FOCUS
// columns, in name order, the x_ columns still last.
func withNames(extra []string, added []billing.Column) []string {
	i := slices.IndexFunc(extra, func(c string) bool { return strings.HasPrefix(c, "x_") })
	if i < 0 {
		i = len(extra)
	}
	focus := slices.Clone(extra[:i])
	for _, c := range added {
		if c.Level != billing.Mandatory {
			focus = append(focus, c.Name)
		}
	}
	slices.Sort(focus)
	return append(focus, extra[i:]...)
}

// focusSpecOf returns the version's specification.
func focusSpecOf(version string) (focusSpec, error) {
	s, ok := focusSpecs[version]
	if !ok {
		_, err := ParseFOCUSVersion(version)
		return focusSpec{}, err
	}
	return s, nil
}

func (s focusSpec) lookup(name string) (billing.Column, bool) {
	i := slices.IndexFunc(s.columns, func(c billing.Column) bool { return c.Name == name })
	if i < 0 {
		return billing.Column{}, false
	}
	return s.columns[i], true
}

// mandatory lists the version's mandatory columns in the table's order.
func (s focusSpec) mandatory() []string {
	var out []string
	for _, c := range s.columns {
		if c.Level == billing.Mandatory {
			out = append(out, c.Name)
		}
	}
	return out
}

// FOCUSColumnsOf are the export's columns in FOCUS version: the version's mandatory columns, then
// the others the export writes and its x_ columns.
func FOCUSColumnsOf(version string) ([]string, error) {
	s, err := focusSpecOf(version)
	if err != nil {
		return nil, err
	}
	return append(s.mandatory(), s.extra...), nil
}

// CheckFOCUS checks a dataset against FOCUS version, as the conformance test reads the export
// back: every mandatory column present once, each cell's type, nullability and allowed values,
// the rules between a row's columns, and those between rows (split allocation ratios that add
// up). name is the file, for the error, a *billing.RowError. Columns neither in the version's
// table nor x_ are refused: an export names nothing FOCUS does not define.
func CheckFOCUS(version, name string, header []string, recs []billing.Record) error {
	s, err := focusSpecOf(version)
	if err != nil {
		return err
	}
	if col, err := s.checkHeader(header); err != nil {
		return &billing.RowError{File: name, Column: col, Err: err}
	}
	for i, r := range recs {
		if col, err := s.checkRow(r); err != nil {
			return &billing.RowError{File: name, Row: i + 1, Column: col, Err: err}
		}
	}
	if row, err := checkRatios(recs); err != nil {
		return &billing.RowError{File: name, Row: row, Column: "AllocatedMethodDetails", Err: err}
	}
	return nil
}

func (s focusSpec) checkHeader(header []string) (string, error) {
	seen := map[string]bool{}
	for _, c := range header {
		if seen[c] {
			return c, errors.New("appears twice")
		}
		seen[c] = true
		if _, ok := s.lookup(c); !ok && !strings.HasPrefix(c, "x_") {
			return c, fmt.Errorf("is not a FOCUS %s column; custom columns start with x_", s.version)
		}
	}
	for _, m := range s.mandatory() {
		if !seen[m] {
			return m, fmt.Errorf("is missing: FOCUS %s makes it mandatory", s.version)
		}
	}
	return "", nil
}

// checkRow checks each cell against the version's table, then the rules 1.2 and 1.3 share
// (billing.Check), then the version's own.
func (s focusSpec) checkRow(r billing.Record) (string, error) {
	for _, c := range s.columns {
		if v, ok := r[c.Name]; ok {
			if err := billing.CheckCell(c, v); err != nil {
				return c.Name, err
			}
		}
	}
	if col, err := billing.Check(r); err != nil {
		return col, err
	}
	return s.rules(r)
}
