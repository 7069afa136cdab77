package report

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/cli"
)

// anomalyRow is one anomaly as cost_anomaly holds it: its rows folded into one.
type anomalyRow struct {
	Anomaly    string   `json:"anomaly"`
	Series     string   `json:"last_series"`
	Cause      string   `json:"last_cause"`
	State      string   `json:"last_state"`
	StartMS    int64    `json:"start_ms"`
	DetectedMS int64    `json:"detected_ms"` // 0: its open was not recorded
	LastMS     int64    `json:"last_ms"`
	Expected   float64  `json:"expected"`
	Peak       float64  `json:"peak"`
	Impact     float64  `json:"impact"`
	Currency   string   `json:"last_currency"`
	Moved      []string `json:"last_moved"`
}

// anomalyColumns are `report anomalies`'s columns.
var anomalyColumns = []string{"series", "start", "detected", "detect_min", "state", "end", "expected_usd_per_hour",
	"observed_usd_per_hour", "impact_usd", "moved", "answer", "anomaly", "cause"}

// Anomalies is `report anomalies`: every cost anomaly the arbiter published (cost_anomaly) that
// was going on in the window, one row each: its series, when it started and when the detector
// knew, whether it is still open, the baseline when it opened, the highest spend rate it reached,
// its impact (spend above the baseline, to its close or its last update) and the dimensions that
// moved. The answer column is empty here: the answers live in the arbiter's answers bucket, and
// the command fills them in (FillAnswers) where it reaches the bus.
func Anomalies(ctx context.Context, q Querier, o Options) (*Result, error) {
	if len(o.By) > 0 || len(o.Filter) > 0 {
		return nil, fmt.Errorf("report anomalies has one row per anomaly and takes no --by or --filter")
	}
	rows, err := queryRows[anomalyRow](ctx, q, fmt.Sprintf(`SELECT anomaly,
		argMax(series, at) AS last_series, argMax(cause, at) AS last_cause, argMax(state, at) AS last_state,
		toUnixTimestamp64Milli(min(start)) AS start_ms,
		toUnixTimestamp64Milli(minIf(at, state = 'open')) AS detected_ms,
		toUnixTimestamp64Milli(max(at)) AS last_ms,
		argMin(expected_usd_per_hour, at) AS expected, max(observed_usd_per_hour) AS peak,
		argMax(impact_usd, at) AS impact, argMax(currency, at) AS last_currency, argMax(moved, at) AS last_moved
		FROM (SELECT * FROM %s WHERE at < %s ORDER BY id LIMIT 1 BY id)
		GROUP BY anomaly
		HAVING min(start) < %s AND (max(at) >= %s OR last_state != 'closed')
		ORDER BY start_ms, anomaly`,
		q.Table("cost_anomaly"), ms64(o.Window.Until), ms64(o.Window.Until), ms64(o.Window.Since)))
	if err != nil {
		return nil, fmt.Errorf("reading cost anomalies: %w", err)
	}
	res := &Result{Title: "Cost anomalies " + o.Window.String(), Columns: anomalyColumns}
	open, impact := 0, 0.0
	for _, a := range rows {
		res.Rows = append(res.Rows, a.row())
		if a.State != "closed" {
			open++
		}
		impact += a.Impact
	}
	if len(rows) > 0 {
		res.Total = cli.Row{"series": fmt.Sprintf("%d anomalies, %d open", len(rows), open), "impact_usd": round(impact, 2)}
	}
	res.Notes = append(res.Notes, "expected is the baseline when the anomaly opened; observed the highest rate it reached; "+
		"impact the spend above the baseline from its start to its close (or its last update while open). "+
		"A series ending in "+unitPriceSuffix+" is a unit-price anomaly: its figures are per GPU-hour.")
	return res, nil
}

// unitPriceSuffix ends a unit-price anomaly's series (anomaly.UnitPriceSuffix; the report reads
// the table, not the detector).
const unitPriceSuffix = "#usd-per-gpu-hour"

func (a anomalyRow) row() cli.Row {
	r := cli.Row{"anomaly": a.Anomaly, "series": a.Series, "cause": a.Cause, "state": a.State,
		"start": time.UnixMilli(a.StartMS).UTC(), "detected": nil, "detect_min": nil, "end": nil,
		"expected_usd_per_hour": round(a.Expected, 2), "observed_usd_per_hour": round(a.Peak, 2),
		"impact_usd": round(a.Impact, 2), "moved": strings.Join(a.Moved, " "), "answer": ""}
	if a.DetectedMS > 0 {
		r["detected"] = time.UnixMilli(a.DetectedMS).UTC()
		r["detect_min"] = round(float64(a.DetectedMS-a.StartMS)/60000, 1)
	}
	if a.State == "closed" {
		r["end"] = time.UnixMilli(a.LastMS).UTC()
	}
	return r
}

// FillAnswers writes each anomaly's answer (by its cause: "expected" or "not expected", and who)
// into rows, a `report anomalies` result's.
func FillAnswers(rows []cli.Row, answers map[string]string) {
	for _, r := range rows {
		if c, ok := r["cause"].(string); ok {
			r["answer"] = answers[c]
		}
	}
}
