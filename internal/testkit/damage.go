package testkit

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
)

// Damage writes 16 KiB of garbage into the middle of the largest JetStream message block in dir,
// as an outside probe damaged a TELEMETRY block; the recorder's tests and the soak use it.
func Damage(dir string) error {
	blocks, _ := filepath.Glob(filepath.Join(dir, "*.blk"))
	var path string
	var size int64
	for _, b := range blocks {
		if fi, err := os.Stat(b); err == nil && fi.Size() > size {
			path, size = b, fi.Size()
		}
	}
	if path == "" {
		return fmt.Errorf("no message block to damage in %s", dir)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	garbage := make([]byte, min(16<<10, size/2+1))
	_, _ = rand.Read(garbage)
	_, err = f.WriteAt(garbage, size/2)
	return err
}
