package anomaly

// Feedback is a person's answer to an anomaly (Slack's Expected / Not expected buttons): whether
// what caused it was expected. The lead stores the answers and replays them into a Quieter.
type Feedback struct {
	Cause    string // Anomaly.Cause of the anomaly answered
	Expected bool
}

// Quieter remembers the answers and says which anomalies still deserve an alert: a repeat of a
// cause marked expected does not; a later "not expected" for the same cause alerts again.
type Quieter struct {
	expected map[string]bool
}

// Answer records a person's answer; the latest answer for a cause wins.
func (q *Quieter) Answer(f Feedback) {
	if q.expected == nil {
		q.expected = map[string]bool{}
	}
	q.expected[f.Cause] = f.Expected
}

// Alert says whether a should be alerted: not when its cause was answered as expected.
func (q *Quieter) Alert(a Anomaly) bool {
	return !q.expected[a.Cause()]
}
