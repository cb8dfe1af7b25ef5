package rules

import (
	"fmt"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// checkUpgrades: what GKE does with autoUpgrade: false (any pool).
func (v *validator) checkUpgrades(pc *matrix.PoolFacts) {
	p := pc.Pool
	if !v.gke() || p.AutoUpgrade == nil || *p.AutoUpgrade {
		return
	}
	switch ch := v.s.ReleaseChannel; {
	case ch != "" && ch != "UNSPECIFIED":
		v.add(RuleSpecProviderField, diag.SeverityError, pc.Field(".autoUpgrade"),
			fmt.Sprintf("pool %s: autoUpgrade: false on a cluster in the %s release channel: GKE keeps node auto-upgrade on for release-channel clusters and rejects the setting", p.Name, ch),
			"Remove autoUpgrade and hold upgrades with a maintenance window (maintenanceWindow) and exclusions, or leave the release channel.", v.c.GCP().GKE.ReleaseChannels.Source)
	case ch == "":
		v.add(RuleSpecProviderField, diag.SeverityWarning, pc.Field(".autoUpgrade"),
			fmt.Sprintf("pool %s: autoUpgrade: false, but spec.releaseChannel is not set: GKE enrolls Standard clusters in a release channel (REGULAR) by default, and then rejects turning node auto-upgrade off", p.Name),
			"Set spec.releaseChannel to the cluster's channel: UNSPECIFIED if it really has none (no-channel clusters are deprecated), otherwise remove autoUpgrade and hold upgrades with a maintenanceWindow.", v.c.GCP().GKE.ReleaseChannels.Source)
	}
}

// checkMaintenanceWindows: a GKE cluster has one maintenance window.
func (v *validator) checkMaintenanceWindows() {
	if !v.gke() {
		return
	}
	first, firstPool := "", ""
	for i, p := range v.s.NodePools {
		if p.MaintenanceWindow == "" {
			continue
		}
		if first == "" {
			first, firstPool = p.MaintenanceWindow, p.Name
			continue
		}
		if p.MaintenanceWindow != first {
			v.add(RuleSpecProviderField, diag.SeverityWarning, spec.PoolPath(i)+".maintenanceWindow",
				fmt.Sprintf("pool %s sets maintenance window %q, pool %s %q: a GKE cluster has one maintenance window", p.Name, p.MaintenanceWindow, firstPool, first),
				"Use one window for all pools.", srcGKEMaint)
		}
	}
}

func (v *validator) gkeHasWindow() bool {
	for _, p := range v.s.NodePools {
		if p.MaintenanceWindow != "" {
			return true
		}
	}
	return false
}
