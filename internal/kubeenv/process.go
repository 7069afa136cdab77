package kubeenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// process is one control-plane binary running for a test, its output in a log file.
type process struct {
	name string
	log  string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // its exit status, set before done is closed
}

// stopGrace is how long a process has to exit after SIGTERM before it is killed.
const stopGrace = 15 * time.Second

// startProcess runs bin with args, its stdout and stderr in dir/<name>.log. It does not wait
// for the process to be ready.
func startProcess(dir, name, bin string, args ...string) (*process, error) {
	logPath := filepath.Join(dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating %s's log: %w", name, err)
	}
	defer f.Close() // the child holds its own descriptor
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Dir = dir
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s (%s): %w", name, bin, err)
	}
	p := &process{name: name, log: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// exited says whether the process has exited, and how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// stop ends the process: SIGTERM, then SIGKILL after stopGrace. It reports a process that had
// already exited on its own, which no test expects of a control-plane binary.
func (p *process) stop() error {
	if gone, err := p.exited(); gone {
		return fmt.Errorf("%s exited before the test ended: %v", p.name, err)
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(stopGrace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	return nil
}

// tail returns the last n lines of the process's log.
func (p *process) tail(n int) string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return fmt.Sprintf("(reading %s: %v)", p.log, err)
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// bindFailed says whether the process exited because a port it was given was taken meanwhile
// (free ports are picked before the process binds them; another process can win the race).
func (p *process) bindFailed() bool {
	gone, _ := p.exited()
	return gone && strings.Contains(p.tail(50), "address already in use")
}

// waitReady polls ready until it returns nil, the process exits or the deadline passes. It is
// the only wait in the harness, and it is for readiness: nothing asserts on how long it took.
func (p *process) waitReady(ctx context.Context, ready func(context.Context) error) error {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if gone, err := p.exited(); gone {
			return fmt.Errorf("%s exited while starting: %v", p.name, err)
		}
		if last = ready(ctx); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w (last check: %v)", p.name, ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// stopAll registers the processes' stop on t's cleanup (in reverse order of start, as t.Cleanup
// runs), and prints their logs' tails when the test failed.
func stopAll(t testing.TB, procs ...*process) {
	t.Cleanup(func() {
		var errs []error
		for i := len(procs) - 1; i >= 0; i-- {
			if err := procs[i].stop(); err != nil {
				errs = append(errs, err)
			}
		}
		if err := errors.Join(errs...); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			for _, p := range procs {
				t.Logf("last lines of %s's log:\n%s", p.name, p.tail(logTailLines))
			}
		}
	})
}

// logTailLines is how much of each log a failed test prints.
const logTailLines = 120

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	_, port, err := net.SplitHostPort(l.Addr().String())
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(port)
}
