package system

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// DataDirLockFile is the file under --data-dir whose lock says a process owns the directory.
const DataDirLockFile = "bursar.lock"

// Holder names the process that owns a data dir; it is written into the lock file so that a
// second process can say whom to stop.
type Holder struct {
	Program string    `json:"program"`
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Since   time.Time `json:"since"`
}

// DataDirHeldError says another process owns the data dir.
type DataDirHeldError struct {
	Dir    string
	Holder Holder // zero when the holder could not be read
}

func (e *DataDirHeldError) Error() string {
	who := "another process"
	if h := e.Holder; h.PID != 0 {
		who = fmt.Sprintf("%q (pid %d on %s, since %s)", h.Program, h.PID, h.Host, h.Since.Format(time.RFC3339))
	}
	return fmt.Sprintf("data dir %s is in use by %s: two arbiters on one data dir would run two NATS servers on one "+
		"store and lose acknowledged events; stop that one, or give this one its own --data-dir", e.Dir, who)
}

// DataDirLock is an exclusive advisory lock (flock) on the data dir's lock file. The kernel drops
// it when the process dies, so a crash never leaves the directory locked.
type DataDirLock struct{ f *os.File }

// LockDataDir takes the data dir for program, creating the directory (0700) if need be. Take it
// before anything under the directory is opened (the NATS store, ClickHouse, the keys): a second
// process is refused with DataDirHeldError before it touches them.
func LockDataDir(dir, program string) (*DataDirLock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data dir: %w", err)
	}
	path := filepath.Join(dir, DataDirLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the data dir's lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &DataDirHeldError{Dir: dir, Holder: readHolder(f)}
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	host, _ := os.Hostname()
	me, _ := json.Marshal(Holder{Program: program, PID: os.Getpid(), Host: host, Since: time.Now().UTC().Truncate(time.Second)})
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt(append(me, '\n'), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("writing the holder to %s: %w", path, err)
	}
	return &DataDirLock{f: f}, nil
}

func readHolder(f *os.File) Holder {
	var h Holder
	b := make([]byte, 4096)
	n, _ := f.ReadAt(b, 0)
	_ = json.Unmarshal(b[:n], &h)
	return h
}

// Release empties the holder record and drops the lock.
func (l *DataDirLock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = l.f.Truncate(0)
	err := l.f.Close() // closing the descriptor drops the flock
	l.f = nil
	return err
}
