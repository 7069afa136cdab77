// Package lockfile holds an exclusive advisory lock (flock) on a file that names its holder, so
// that a second process is refused with who to stop. The kernel drops the lock when the process
// dies: a crash never leaves a file locked.
package lockfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// Owner names the process that holds a lock. It is written into the lock file.
type Owner struct {
	Program string    `json:"program"` // e.g. "arbiter run"
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Since   time.Time `json:"since"`
}

func (o Owner) String() string {
	return fmt.Sprintf("%q (pid %d on %s, since %s)", o.Program, o.PID, o.Host, o.Since.Format(time.RFC3339))
}

// HeldError says another process holds the lock at Path.
type HeldError struct {
	Path  string
	Owner Owner // zero when the owner could not be read
}

func (e *HeldError) Error() string { return fmt.Sprintf("%s is held by %s", e.Path, e.Owner.Who()) }

// Who names the owner for an error: the record, or "another process" when it could not be read.
func (o Owner) Who() string {
	if o.PID == 0 {
		return "another process"
	}
	return o.String()
}

// Lock is a held lock file.
type Lock struct{ f *os.File }

// Acquire takes the lock at path (created with perm) for program, or returns *HeldError when
// another process holds it.
func Acquire(path, program string, perm os.FileMode) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, perm)
	if err != nil {
		return nil, fmt.Errorf("opening lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &HeldError{Path: path, Owner: readOwner(f)}
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	host, _ := os.Hostname()
	me, _ := json.Marshal(Owner{Program: program, PID: os.Getpid(), Host: host, Since: time.Now().UTC().Truncate(time.Second)})
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt(append(me, '\n'), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("writing the owner to %s: %w", path, err)
	}
	return &Lock{f: f}, nil
}

func readOwner(f *os.File) Owner {
	var o Owner
	b := make([]byte, 4096)
	n, _ := f.ReadAt(b, 0)
	_ = json.Unmarshal(b[:n], &o)
	return o
}

// Release empties the owner record and drops the lock.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = l.f.Truncate(0)
	err := l.f.Close() // closing the descriptor drops the flock
	l.f = nil
	return err
}
