package console

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/report"
)

// queryParams are the query parameters a report request takes; any other is refused, so a typo
// (aggregates=, windows=) is heard rather than ignored.
var queryParams = []string{"window", "since", "until", "aggregate", "filter", "basis", "plan"}

// parseQuery reads the query string of GET /api/v1/reports/{name} (and of the pages) into the
// request for report name at now:
//
//	window=7d | 24h | today | yesterday | thismonth | lastmonth, or since=&until= (RFC 3339 or dates)
//	aggregate=workload,gpu        the dimensions to group by
//	filter=provider:aws,market:spot   (repeatable) keep only these values of a dimension
//	basis=estimated | billed      cost, tokens and savings
//	plan=ID                       decisions and holds: that plan only
//
// Errors name the parameter at fault.
func parseQuery(name string, q url.Values, now time.Time) (report.Request, error) {
	for k, v := range q {
		if !slices.Contains(queryParams, k) {
			return report.Request{}, fmt.Errorf("unknown parameter %s=: want some of %s", k, strings.Join(queryParams, "=, ")+"=")
		}
		if k != "filter" && len(v) > 1 {
			return report.Request{}, fmt.Errorf("%s= given %d times: give it once", k, len(v))
		}
	}
	w, err := report.ParseWindowSpec(q.Get("window"), q.Get("since"), q.Get("until"), now)
	if err != nil {
		return report.Request{}, err
	}
	by, err := parseAggregate(q.Get("aggregate"))
	if err != nil {
		return report.Request{}, err
	}
	filter, err := parseFilter(q["filter"])
	if err != nil {
		return report.Request{}, err
	}
	if len(by) > 0 && slices.Contains(report.History, name) {
		return report.Request{}, fmt.Errorf("aggregate=: %s has one row per item and groups by nothing; use filter= instead", name)
	}
	req := report.NewRequest(name, report.Options{Window: w, By: by, Filter: filter, Now: now, Basis: q.Get("basis")})
	req.Plan = q.Get("plan")
	if name == "budget" { // each policy's own period, up to now
		req.Since, req.Until = time.Time{}, time.Time{}
	}
	return req, nil
}

// parseAggregate reads aggregate=: comma-separated dimensions, each once.
func parseAggregate(s string) ([]report.Dim, error) {
	var out []report.Dim
	for _, f := range strings.Split(s, ",") {
		d := report.Dim(strings.TrimSpace(f))
		switch {
		case d == "":
			continue
		case !slices.Contains(report.Dims, d):
			return nil, fmt.Errorf("aggregate=%s: unknown dimension %q; want some of %s", s, d, dimList())
		case slices.Contains(out, d):
			return nil, fmt.Errorf("aggregate=%s: %s given twice", s, d)
		}
		out = append(out, d)
	}
	return out, nil
}

// parseFilter reads filter= values: comma-separated dimension:value terms; a dimension given
// more than once keeps any of its values.
func parseFilter(values []string) (report.Filter, error) {
	var f report.Filter
	for _, v := range values {
		for _, term := range strings.Split(v, ",") {
			term = strings.TrimSpace(term)
			if term == "" {
				continue
			}
			dim, val, ok := strings.Cut(term, ":")
			d := report.Dim(strings.TrimSpace(dim))
			val = strings.TrimSpace(val)
			switch {
			case !ok || val == "":
				return nil, fmt.Errorf("filter=%s: want dimension:value, e.g. filter=provider:aws", term)
			case !slices.Contains(report.Dims, d):
				return nil, fmt.Errorf("filter=%s: unknown dimension %q; want one of %s", term, d, dimList())
			}
			if f == nil {
				f = report.Filter{}
			}
			if !slices.Contains(f[d], val) {
				f[d] = append(f[d], val)
			}
		}
	}
	return f, nil
}

func dimList() string {
	s := make([]string, len(report.Dims))
	for i, d := range report.Dims {
		s[i] = string(d)
	}
	return strings.Join(s, ", ")
}
