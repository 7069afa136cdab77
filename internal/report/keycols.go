package report

import "strings"

// keyCols is the set of a Key's fields a report reads from its usage. The cost rollup is summed
// over the others in the query and they are left empty, so a report by workload reads a row per
// workload and step, not one per series and step (the decoding of those rows was most of the
// time a console page took at 10,000 series).
type keyCols uint8

const (
	colWorkload keyCols = 1 << iota
	colLocation
	colProvider
	colMarket
	colGPU
	allCols = colWorkload | colLocation | colProvider | colMarket | colGPU
)

// colOf is the key field a dimension is read from: a region from the location, a team from the
// workload (the fleet file maps them).
func colOf(d Dim) keyCols {
	switch d {
	case Workload, Team:
		return colWorkload
	case Location, Region:
		return colLocation
	case Provider:
		return colProvider
	case Market:
		return colMarket
	case GPU:
		return colGPU
	}
	return 0
}

// usageCols are the key fields a report over o needs: those of its --by dimensions and of extra,
// and those the filters on region and team are applied to after the query. Billed cost is
// matched to usage by workload, location and day, and is spread over every key as before.
func usageCols(o Options, extra ...Dim) keyCols {
	if o.Basis == BasisBilled {
		return allCols
	}
	var c keyCols
	for _, d := range append(extra, o.By...) {
		c |= colOf(d)
	}
	if len(o.Filter[Region]) > 0 {
		c |= colLocation
	}
	if len(o.Filter[Team]) > 0 {
		c |= colWorkload
	}
	return c
}

// project is k with the fields not in c left empty.
func (c keyCols) project(k Key) Key {
	if c&colWorkload == 0 {
		k.Workload = ""
	}
	if c&colLocation == 0 {
		k.Location = ""
	}
	if c&colProvider == 0 {
		k.Provider = ""
	}
	if c&colMarket == 0 {
		k.Market = ""
	}
	if c&colGPU == 0 {
		k.GPU = ""
	}
	return k
}

// keyColumns are the cost tables' columns of a Key's fields, named as keyRow reads them.
var keyColumns = []struct {
	col    keyCols
	column string
	name   string
}{
	{colWorkload, "workload", "workload"}, {colLocation, "location", "location"}, {colProvider, "provider", "provider"},
	{colMarket, "market", "market"}, {colGPU, "gpu_model", "gpu"},
}

// selectKey is the SELECT list of the key's fields in c, each followed by ", ", and the same
// columns to group by, comma-separated. The fields not in c are not selected (an alias of an
// empty string would stand for the column in the WHERE clause too), so they decode empty.
func (c keyCols) selectKey() (sel string, group []string) {
	for _, kc := range keyColumns {
		if c&kc.col != 0 {
			sel += kc.column + " AS " + kc.name + ", "
			group = append(group, kc.column)
		}
	}
	return sel, group
}

// groupBy is the GROUP BY clause of cols; with none, the clause that keeps the query's one row
// of sums only when a row was summed (a GROUP BY of nothing answers a row of zeros).
func groupBy(cols []string) string {
	if len(cols) == 0 {
		return "HAVING count() > 0"
	}
	return "GROUP BY " + strings.Join(cols, ", ")
}
