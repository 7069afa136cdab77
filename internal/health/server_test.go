package health_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/health"
)

// short are timeouts a test can outwait.
var short = health.Timeouts{ReadHeader: 100 * time.Millisecond, Read: 200 * time.Millisecond,
	Write: time.Second, Idle: 200 * time.Millisecond}

// serve serves a handler that reads whole bodies (as the Slack endpoint does) with timeouts t.
func serve(t *testing.T, to health.Timeouts) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := health.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusRequestTimeout)
			return
		}
		fmt.Fprintln(w, "ok")
	}), to)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// closedByServer reads conn until the server closes it; it fails the test if the connection is
// still open after a wait far longer than the timeouts (the bound is only how long to look).
func closedByServer(t *testing.T, conn net.Conn, what string) {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := io.Copy(io.Discard, conn)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("%s: the server kept the connection open", what)
	}
}

// TestIdleConnectionIsClosed: a keep-alive connection left idle after its request is closed.
func TestIdleConnectionIsClosed(t *testing.T) {
	conn, err := net.Dial("tcp", serve(t, short))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "GET /livez HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	closedByServer(t, conn, "an idle keep-alive connection")
}

// TestSlowHeadersAreCut: a client that never finishes its headers is cut off.
func TestSlowHeadersAreCut(t *testing.T) {
	conn, err := net.Dial("tcp", serve(t, short))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "POST /slack/interactions HTTP/1.1\r\nHost: x\r\n")
	closedByServer(t, conn, "headers never finished")
}

// TestDrippingBodyIsCut: a body dripped a byte at a time, never finishing, is cut off.
func TestDrippingBodyIsCut(t *testing.T) {
	conn, err := net.Dial("tcp", serve(t, short))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "POST /slack/interactions HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := conn.Write([]byte("x")); err != nil {
					return
				}
			}
		}
	}()
	closedByServer(t, conn, "a dripping body")
}

// TestDefaultTimeoutsAreSet: the servers the programs run have every timeout.
func TestDefaultTimeoutsAreSet(t *testing.T) {
	srv := health.NewServer(http.NotFoundHandler(), health.DefaultTimeouts)
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.WriteTimeout <= 0 || srv.IdleTimeout <= 0 || srv.MaxHeaderBytes <= 0 {
		t.Errorf("a default server lacks a timeout: %+v", srv)
	}
}
