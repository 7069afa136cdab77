// Package cachedir says where Bursar keeps what it fetches or builds once per machine (libchdb.so,
// the test control plane), outside the repository: $BURSAR_CACHE_DIR, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/bursar, as scripts/setup-chdb.sh and scripts/setup-kube.sh put it.
package cachedir

import (
	"os"
	"path/filepath"
)

// Root is the cache's root. It does not check that it exists.
func Root() string {
	if root := os.Getenv("BURSAR_CACHE_DIR"); root != "" {
		return root
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = os.TempDir()
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "bursar")
}
