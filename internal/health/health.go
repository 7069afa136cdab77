// Package health serves a long-running program's probes and metrics on one port: /livez for the
// kubelet's liveness probe, /readyz for readiness and /metrics for Prometheus. One port keeps a
// pod spec and a ServiceMonitor to one named port per program.
package health

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// CheckTimeout bounds one readiness check, so a probe answers before the kubelet gives up on it
// (its default timeoutSeconds is 1; the chart sets 3).
const CheckTimeout = 2 * time.Second

// Check is one condition a program needs to do its work. It returns nil when the condition holds
// and an error saying what is wrong otherwise.
type Check struct {
	Name string
	Run  func(ctx context.Context) error
}

// Ready runs every check and joins the failures, each named; nil means ready.
func Ready(ctx context.Context, checks []Check) error {
	var errs []error
	for _, c := range checks {
		cctx, cancel := context.WithTimeout(ctx, CheckTimeout)
		err := c.Run(cctx)
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.Name, err))
		}
	}
	return errors.Join(errs...)
}

// Handler serves /livez, /readyz and /metrics. /livez answers 200 while the process serves
// HTTP: a program that lost its bus is not dead, and restarting it would not bring the bus
// back. /readyz answers 200 when every check holds and 503 with the failures otherwise.
func Handler(reg *prometheus.Registry, checks []Check) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("/livez", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := Ready(r.Context(), checks); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, err)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	return mux
}

// Serve serves Handler on addr until ctx ends. An empty addr serves nothing (and waits for ctx).
func Serve(ctx context.Context, addr string, reg *prometheus.Registry, checks []Check, log *slog.Logger) error {
	if addr == "" {
		<-ctx.Done()
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("health and metrics endpoint on %s: %w (change it with --metrics-listen)", addr, err)
	}
	srv := NewServer(Handler(reg, checks), DefaultTimeouts)
	base := "http://" + ln.Addr().String()
	log.Info("serving probes and metrics", "metrics", base+"/metrics", "livez", base+"/livez", "readyz", base+"/readyz")
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("health and metrics endpoint: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
