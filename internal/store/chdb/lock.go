package chdb

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

// Owner names the process that holds an embedded store. It is written into the lock file so a
// second opener can say who to stop or ask instead.
type Owner struct {
	Program string    `json:"program"` // e.g. "arbiter run"
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Since   time.Time `json:"since"`
}

func (o Owner) String() string {
	return fmt.Sprintf("%q (pid %d on %s, since %s)", o.Program, o.PID, o.Host, o.Since.Format(time.RFC3339))
}

// OwnedError says the embedded store is held by another process.
type OwnedError struct {
	Dir   string
	Owner Owner // zero when the owner could not be read
}

func (e *OwnedError) Error() string {
	who := "another process"
	if e.Owner.PID != 0 {
		who = e.Owner.String()
	}
	return fmt.Sprintf("embedded ClickHouse store %s is owned by %s: stop it, or query it through it "+
		"(report does this over NATS), or give this process its own --data-dir", e.Dir, who)
}

// ownerLock is an exclusive advisory lock (flock) on a file naming its holder. The kernel drops
// the lock when the process dies, so a crash never leaves the store locked.
type ownerLock struct{ f *os.File }

func acquire(path, program string) (*ownerLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("opening embedded ClickHouse lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &OwnedError{Dir: strings.TrimSuffix(path, ".lock"), Owner: readOwner(f)}
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	host, _ := os.Hostname()
	me := Owner{Program: program, PID: os.Getpid(), Host: host, Since: time.Now().UTC().Truncate(time.Second)}
	b, _ := json.Marshal(me)
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt(append(b, '\n'), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("writing owner to %s: %w", path, err)
	}
	return &ownerLock{f: f}, nil
}

func readOwner(f *os.File) Owner {
	var o Owner
	b := make([]byte, 4096)
	n, _ := f.ReadAt(b, 0)
	_ = json.Unmarshal(b[:n], &o)
	return o
}

// release empties the owner record and drops the lock.
func (l *ownerLock) release() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = l.f.Truncate(0)
	err := l.f.Close() // closing the descriptor releases the flock
	l.f = nil
	return err
}
