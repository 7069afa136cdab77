package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/bursar-dev/bursar/internal/budget"
	fleetfile "github.com/bursar-dev/bursar/internal/fleet"
)

// warnScopes prints to w a warning for each policy whose scope matches no workload of the fleet
// file: a typo in a name would otherwise be stored silently and never see spend. The fleet file
// is path, or ./bursar.yaml when path is empty and that file exists (as `arbiter run` reads it);
// with neither there is nothing to check against. It returns the warnings printed, by policy
// name and message, so the arbiter's own (its answer to the write) are not printed twice.
func warnScopes(w io.Writer, path string, ps []budget.Policy) (map[string]bool, error) {
	warned := map[string]bool{}
	if path == "" {
		if _, err := os.Stat("bursar.yaml"); errors.Is(err, os.ErrNotExist) {
			return warned, nil
		}
		path = "bursar.yaml"
	}
	cfg, err := fleetfile.Load(path)
	if err != nil {
		return nil, fmt.Errorf("checking the scopes against the fleet file: %w", err)
	}
	for _, p := range ps {
		for _, msg := range budget.Warnings(p, cfg) {
			fmt.Fprintf(w, "warning: budget %q: %s (fleet file %s)\n", p.Name, msg, path)
			warned[p.Name+"\x00"+msg] = true
		}
	}
	return warned, nil
}
