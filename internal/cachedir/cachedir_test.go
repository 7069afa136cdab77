package cachedir_test

import (
	"path/filepath"
	"testing"

	"github.com/bursar-dev/bursar/internal/cachedir"
)

func TestRoot(t *testing.T) {
	tests := []struct {
		name, cache, xdg, home, want string
	}{
		{"BURSAR_CACHE_DIR first", "/c", "/x", "/h", "/c"},
		{"then XDG_CACHE_HOME", "", "/x", "/h", filepath.Join("/x", "bursar")},
		{"then the home's .cache", "", "", "/h", filepath.Join("/h", ".cache", "bursar")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("BURSAR_CACHE_DIR", tt.cache)
			t.Setenv("XDG_CACHE_HOME", tt.xdg)
			t.Setenv("HOME", tt.home)
			if got := cachedir.Root(); got != tt.want {
				t.Errorf("Root() = %q, want %q", got, tt.want)
			}
		})
	}
}
