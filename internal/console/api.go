package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/report"
)

// badRequest is an error in what the caller asked: the API answers 400 with it.
type badRequest struct{ error }

func (e badRequest) Unwrap() error { return e.error }

// answer runs req (a report named and parsed from a query) through the reporter, with the
// console's fleet file and policies. Errors in the request are badRequest.
func (s *Server) answer(ctx context.Context, req report.Request) (report.Answer, error) {
	req.Fleet = s.o.Fleet
	if req.Report == "budget" {
		req.Policies = s.policies()
	}
	if why := req.Options().NeedsFleet(); why != "" && req.Fleet == nil {
		return report.Answer{}, badRequest{fmt.Errorf("aggregate= or filter=: %s, which this console was started without", why)}
	}
	if err := req.Validate(); err != nil {
		return report.Answer{}, badRequest{err}
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := s.o.Reports.Run(ctx, req)
	if err != nil {
		return report.Answer{}, fmt.Errorf("report %s: %w", req.Report, err)
	}
	return report.NewAnswer(req, res), nil
}

// query parses r's query into the request for report name and runs it.
func (s *Server) query(r *http.Request, name string) (report.Answer, error) {
	if !slices.Contains(report.Reports, name) {
		return report.Answer{}, badRequest{fmt.Errorf("report %q: want one of %s", name, strings.Join(report.Reports, ", "))}
	}
	req, err := parseQuery(name, r.URL.Query(), s.now())
	if err != nil {
		return report.Answer{}, badRequest{err}
	}
	return s.answer(r.Context(), req)
}

// apiReport is GET /api/v1/reports/{name}.
func (s *Server) apiReport(w http.ResponseWriter, r *http.Request) {
	s.serveAnswer(w, r, r.PathValue("name"))
}

// apiNamed serves one report at its own path (fleet, decisions, budgets).
func (s *Server) apiNamed(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { s.serveAnswer(w, r, name) }
}

func (s *Server) serveAnswer(w http.ResponseWriter, r *http.Request, name string) {
	a, err := s.query(r, name)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

// apiHolds is GET /api/v1/holds: the holds report, decided and pending.
func (s *Server) apiHolds(w http.ResponseWriter, r *http.Request) { s.serveAnswer(w, r, "holds") }

// apiOpen is GET /api/v1/holds/open: the holds pending now, live from the approvals, and whether
// the caller may decide each.
func (s *Server) apiOpen(w http.ResponseWriter, r *http.Request) {
	c, ok := s.identify(r)
	if !ok {
		writeJSON(w, http.StatusUnauthorized, apiErr{Error: "token not recognised"})
		return
	}
	writeJSON(w, http.StatusOK, s.openHolds(c))
}

// apiDecide is POST /api/v1/holds/{plan}/approve or /reject.
func (s *Server) apiDecide(w http.ResponseWriter, r *http.Request) {
	d, status, err := s.decide(w, r)
	if err != nil {
		writeJSON(w, status, apiErr{Error: err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// decision is what a decision taken here answers.
type decision struct {
	Plan     string `json:"plan"`
	Decision string `json:"decision"`
	By       string `json:"by"`
}

// decide checks who may decide and asks the approvals to. Nothing changes when it returns an
// error; the status says why (403 not allowed, 409 no longer pending).
func (s *Server) decide(w http.ResponseWriter, r *http.Request) (decision, int, error) {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	plan, verdict := r.PathValue("plan"), r.PathValue("verdict")
	if verdict != "approve" && verdict != "reject" {
		return decision{}, http.StatusNotFound, fmt.Errorf("%s: want approve or reject", verdict)
	}
	c, ok := s.identify(r)
	if !ok {
		return decision{}, http.StatusUnauthorized, errors.New("token not recognised: make one with arbiter console token --as YOUR-ID")
	}
	if why := s.canWrite(r, c); why != "" {
		s.log.Info("console decision refused", "plan", plan, "verdict", verdict, "who", c.Who, "why", why)
		return decision{}, http.StatusForbidden, errors.New(why)
	}
	if s.o.Approvals == nil {
		return decision{}, http.StatusForbidden, errors.New("this console shows holds read-only: approve in Slack or on the arbiter's console")
	}
	ctx, cancel := context.WithTimeout(r.Context(), 20*time.Second) // Slack resolves an e-mail, the decision is published
	defer cancel()
	err := s.o.Approvals.Decide(ctx, plan, verdict == "approve", c.Who)
	s.log.Info("console decision", "plan", plan, "verdict", verdict, "who", c.Who, "via", c.Via, "err", err)
	switch {
	case errors.Is(err, ErrNotApprover):
		return decision{}, http.StatusForbidden, fmt.Errorf("%s was not recorded: %w", verdict, err)
	case errors.Is(err, ErrNotPending), errors.Is(err, ErrTimedOut):
		return decision{}, http.StatusConflict, fmt.Errorf("%s was not recorded: %w", verdict, err)
	case err != nil:
		return decision{}, http.StatusBadGateway, fmt.Errorf("%s was not recorded: %w", verdict, err)
	}
	word := map[string]string{"approve": "approved", "reject": "rejected"}[verdict]
	return decision{Plan: plan, Decision: word, By: c.Who}, http.StatusOK, nil
}

// apiErr is the body of every API error.
type apiErr struct {
	Error string `json:"error"`
}

// apiError answers err: 400 for a bad request, 500 otherwise.
func (s *Server) apiError(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusInternalServerError
	var bad badRequest
	if errors.As(err, &bad) {
		status = http.StatusBadRequest
	} else {
		s.log.Warn("console report failed", "path", r.URL.Path, "err", err)
	}
	writeJSON(w, status, apiErr{Error: err.Error()})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
