package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/bursar-dev/bursar/internal/reclaim"
)

// dmiDir is where Linux shows the machine's firmware identity, which names the cloud a virtual
// machine runs on without a network call.
const dmiDir = "/sys/class/dmi/id"

// detectCloud says which cloud this machine runs on, "aws", "gcp" or "azure", from its DMI
// identity under dir; "" when it is none of them (a laptop) or cannot be told.
func detectCloud(dir string) string {
	var id strings.Builder
	for _, f := range []string{"sys_vendor", "product_name", "bios_vendor", "bios_version", "chassis_asset_tag"} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		id.WriteString(strings.ToLower(string(b)) + "\n")
	}
	s := id.String()
	switch {
	case strings.Contains(s, "amazon"):
		return "aws"
	case strings.Contains(s, "google"):
		return "gcp"
	case strings.Contains(s, "microsoft corporation") || strings.Contains(s, "7783-7084-3265-9085-8269-3286-77"):
		return "azure"
	}
	return ""
}

// onInstanceWatchers keeps, of the on-instance reclaim watchers (AWS IMDS, GCP metadata, Azure
// Scheduled Events), only the one of the cloud this machine runs on. One configured alone is kept
// as configured (a test endpoint, a cloud DMI does not name); with several, those of other clouds
// would poll metadata services that are not there, so they are not started, and when the cloud is
// not known none is, with a warning that says what to fix. The EventBridge watcher is not on the
// instance and is always kept.
func onInstanceWatchers(cfg reclaim.Config, cloud string, log *slog.Logger) reclaim.Config {
	n := 0
	for _, on := range []bool{cfg.AWS != nil, cfg.GCP != nil, cfg.Azure != nil} {
		if on {
			n++
		}
	}
	if n <= 1 {
		return cfg
	}
	out := reclaim.Config{AWSEvents: cfg.AWSEvents}
	switch cloud {
	case "aws":
		out.AWS = cfg.AWS
	case "gcp":
		out.GCP = cfg.GCP
	case "azure":
		out.Azure = cfg.Azure
	}
	if out.AWS == nil && out.GCP == nil && out.Azure == nil {
		log.Warn("several on-instance reclaim watchers are configured (aws_imds, gcp_metadata, azure_scheduled_events) "+
			"and this machine is not on the cloud of any of them: none started; keep only the watcher of the node's cloud in the config",
			"cloud", cmpOr(cloud, "unknown"))
		return out
	}
	log.Info("starting the on-instance reclaim watcher of this machine's cloud only", "cloud", cloud)
	return out
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// watcherName is a reclaim watcher's name in logs.
func watcherName(r reclaim.Runner) string {
	switch r.(type) {
	case *reclaim.AWSIMDSWatcher:
		return "aws spot notices (instance metadata)"
	case *reclaim.EventBridgeWatcher:
		return "aws spot notices (EventBridge queue)"
	case *reclaim.GCPWatcher:
		return "gcp preemption notices (instance metadata)"
	case *reclaim.AzureWatcher:
		return "azure scheduled events"
	}
	return "reclaim watcher"
}
