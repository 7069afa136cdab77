package chdb

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bursar-dev/bursar/internal/lockfile"
)

// Owner names the process that holds an embedded store. It is written into the lock file so a
// second opener can say who to stop or ask instead.
type Owner = lockfile.Owner

// OwnedError says the embedded store is held by another process.
type OwnedError struct {
	Dir   string
	Owner Owner // zero when the owner could not be read
}

func (e *OwnedError) Error() string {
	return fmt.Sprintf("embedded ClickHouse store %s is owned by %s: stop it, or query it through it "+
		"(report does this over NATS), or give this process its own --data-dir", e.Dir, e.Owner.Who())
}

// acquire takes the store's lock file at path for program (lockfile.Acquire), saying which store
// is held when another process has it.
func acquire(path, program string) (*lockfile.Lock, error) {
	l, err := lockfile.Acquire(path, program, 0o640)
	var held *lockfile.HeldError
	if errors.As(err, &held) {
		return nil, &OwnedError{Dir: strings.TrimSuffix(path, ".lock"), Owner: held.Owner}
	}
	if err != nil {
		return nil, fmt.Errorf("embedded ClickHouse lock: %w", err)
	}
	return l, nil
}
