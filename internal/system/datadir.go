package system

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bursar-dev/bursar/internal/lockfile"
)

// DataDirLockFile is the file under --data-dir whose lock says a process owns the directory.
const DataDirLockFile = "bursar.lock"

// Holder names the process that owns a data dir; it is written into the lock file so that a
// second process can say whom to stop.
type Holder = lockfile.Owner

// DataDirHeldError says another process owns the data dir.
type DataDirHeldError struct {
	Dir    string
	Holder Holder // zero when the holder could not be read
}

func (e *DataDirHeldError) Error() string {
	return fmt.Sprintf("data dir %s is in use by %s: two arbiters on one data dir would run two NATS servers on one "+
		"store and lose acknowledged events; stop that one, or give this one its own --data-dir", e.Dir, e.Holder.Who())
}

// DataDirLock holds a data dir (lockfile.Lock on its lock file): the kernel drops it when the
// process dies, so a crash never leaves the directory locked.
type DataDirLock = lockfile.Lock

// LockDataDir takes the data dir for program, creating the directory (0700) if need be. Take it
// before anything under the directory is opened (the NATS store, ClickHouse, the keys): a second
// process is refused with DataDirHeldError before it touches them.
func LockDataDir(dir, program string) (*DataDirLock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data dir: %w", err)
	}
	l, err := lockfile.Acquire(filepath.Join(dir, DataDirLockFile), program, 0o600)
	var held *lockfile.HeldError
	if errors.As(err, &held) {
		return nil, &DataDirHeldError{Dir: dir, Holder: held.Owner}
	}
	if err != nil {
		return nil, fmt.Errorf("the data dir's lock: %w", err)
	}
	return l, nil
}
