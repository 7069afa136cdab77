package placement_test

import (
	"testing"

	"github.com/bursar-dev/bursar/internal/placement/placementtest"
)

func TestScenarios(t *testing.T) {
	placementtest.RunDir(t, "testdata")
}
