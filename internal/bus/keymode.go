package bus

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// checkPrivate refuses a credentials directory or key file that others than Bursar's user may
// read or write (docs/security.md promises 0600 keys in a 0700 directory). It does not fix the
// mode itself: a key that was world-readable may have been copied, so its owner decides whether
// to tighten it or to rotate it.
func checkPrivate(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("checking NATS credentials %s: %w", path, err)
	}
	mode := fi.Mode().Perm()
	if mode&0o077 == 0 {
		return nil
	}
	if fi.IsDir() {
		return fmt.Errorf("NATS credentials dir %s has mode %#o: others on this machine can reach the role keys in it; "+
			"make it 0700 (chmod 700 %s), and rotate the keys (delete them and restart \"arbiter run\") if others may have read them",
			path, mode, path)
	}
	return fmt.Errorf("NATS key %s has mode %#o: others on this machine can read it; make it 0600 (chmod 600 %s), "+
		"or delete it and restart \"arbiter run\" to make a new one if others may have read it", path, mode, path)
}

// checkKeyDir checks dir and the role keys in it.
func checkKeyDir(dir string) error {
	if err := checkPrivate(dir); err != nil {
		return err
	}
	for _, role := range Roles {
		if err := checkPrivate(SeedFile(dir, role)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
