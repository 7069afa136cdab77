package console

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/report"
)

// Options are what a console shows and who may act on it.
type Options struct {
	// Reports answers every figure the console shows: the console runs reports through it and
	// computes none of its own.
	Reports report.Reporter
	// Fleet is the fleet file, for the reports that need it (team, region, capacity).
	Fleet *fleet.Config
	// Policies returns the budget policies now, for the budget report; nil: none.
	Policies func() []budget.Policy
	// Approvals decides holds; nil shows holds read-only (report serve).
	Approvals Approvals
	// AnomalyAnswers reads the answers given to cost anomalies, by cause (anomalywatch.Words);
	// nil: the anomalies page says the console cannot show them.
	AnomalyAnswers func(context.Context) (map[string]string, error)
	Access         Access
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	Log *slog.Logger
}

// Server is the console: its pages, its API, and the rights checked on them.
type Server struct {
	o      Options
	access *access
	key    signer
	pages  map[string]*template.Template
	log    *slog.Logger
	mux    *http.ServeMux
}

// New checks o and builds the console. It refuses a non-loopback address without TLS, a trusted
// header without trusted proxies, and a session key it cannot read.
func New(o Options) (*Server, error) {
	if o.Reports == nil {
		return nil, errors.New("console: no reports to show (Options.Reports)")
	}
	a, err := newAccess(o.Access)
	if err != nil {
		return nil, err
	}
	key, err := loadKey(a.DataDir)
	if err != nil {
		return nil, err
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	s := &Server{o: o, access: a, key: key, pages: pages, log: o.Log, mux: http.NewServeMux()}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.routes()
	return s, nil
}

// Handler serves the console's pages, API and static files.
func (s *Server) Handler() http.Handler { return s.secure(s.mux) }

// Serve serves the console on ln, over TLS when configured, until ctx ends. Without TLS it
// refuses a listener that is not on loopback, whatever the options said.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if s.access.tls == nil && !loopback(ln.Addr().String()) {
		return fmt.Errorf("console on %s: not loopback and %w (--console-tls-cert, --console-tls-key)", ln.Addr(), errNeedsTLS)
	}
	if s.access.tls != nil {
		ln = tls.NewListener(ln, s.access.tls)
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 2 * time.Minute, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	s.log.Info("console serving", "addr", ln.Addr().String(), "tls", s.access.tls != nil)
	select {
	case err := <-done:
		return fmt.Errorf("console: %w", err)
	case <-ctx.Done():
	}
	stop, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(stop); err != nil {
		return fmt.Errorf("console: stopping: %w", err)
	}
	return nil
}

// routes maps the console's paths.
func (s *Server) routes() {
	m := s.mux
	m.Handle("GET /static/", staticFiles())
	m.HandleFunc("GET /login", s.loginPage)
	m.HandleFunc("POST /login", s.login)
	m.HandleFunc("POST /logout", s.logout)
	m.HandleFunc("GET /{$}", s.fleetPage)
	m.HandleFunc("GET /decisions", s.decisionsPage)
	m.HandleFunc("GET /decisions/{plan}", s.decisionPage)
	m.HandleFunc("GET /approvals", s.approvalsPage)
	m.HandleFunc("POST /approvals/{plan}/{verdict}", s.decideForm)
	m.HandleFunc("GET /budgets", s.budgetsPage)
	m.HandleFunc("GET /costs", s.costsPage)
	m.HandleFunc("GET /anomalies", s.anomaliesPage)
	m.HandleFunc("GET /api/v1/reports/{name}", s.apiReport)
	m.HandleFunc("GET /api/v1/fleet", s.apiNamed("fleet"))
	m.HandleFunc("GET /api/v1/decisions", s.apiNamed("decisions"))
	m.HandleFunc("GET /api/v1/decisions/{plan}", s.apiDecision)
	m.HandleFunc("GET /api/v1/holds", s.apiHolds)
	m.HandleFunc("GET /api/v1/holds/open", s.apiOpen)
	m.HandleFunc("GET /api/v1/budgets", s.apiNamed("budget"))
	m.HandleFunc("POST /api/v1/holds/{plan}/{verdict}", s.apiDecide)
}

// secure sets the headers every answer carries: no framing (clickjacking an Approve button), no
// content sniffing, scripts and styles from this console only, and no referrer to other sites.
func (s *Server) secure(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "same-origin")
		if s.access.tls != nil {
			hd.Set("Strict-Transport-Security", "max-age=31536000")
		}
		h.ServeHTTP(w, r)
	})
}

// now is the console's clock.
func (s *Server) now() time.Time {
	if s.o.Now != nil {
		return s.o.Now().UTC()
	}
	return time.Now().UTC()
}

// policies are the budget policies now.
func (s *Server) policies() []budget.Policy {
	if s.o.Policies == nil {
		return nil
	}
	return s.o.Policies()
}
