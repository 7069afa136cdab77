package console

import (
	"net/http"

	"github.com/bursar-dev/bursar/internal/report"
)

// anomaliesView is the anomalies page: `report anomalies` over one window, with the answers
// people gave in Slack where the console can read them.
type anomaliesView struct {
	Window  string
	Windows []string
	Answer  report.Answer
	// NoAnswers says why the answer column is empty, when it must be.
	NoAnswers string
}

// anomaliesPage is GET /anomalies?window=: the cost anomalies found in the window.
func (s *Server) anomaliesPage(w http.ResponseWriter, r *http.Request) {
	q := pageQuery(r, "7d")
	a, err := s.run(r, "anomalies", q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v := anomaliesView{Window: q.Get("window"), Windows: windows, Answer: a}
	switch {
	case len(a.Rows) == 0:
	case s.o.AnomalyAnswers == nil:
		v.NoAnswers = "Answers given in Slack are kept by the arbiter; this console does not reach its bus."
	default:
		answers, err := s.o.AnomalyAnswers(r.Context())
		if err != nil {
			v.NoAnswers = "Answers not shown: " + err.Error()
			s.log.Warn("reading anomaly answers for the console", "err", err)
		}
		report.FillAnswers(a.Rows, answers)
	}
	s.page(w, r, http.StatusOK, "anomalies", v)
}
