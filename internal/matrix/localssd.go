package matrix

import "strings"

// gkeFixedLocalSSDSeries are the Compute Engine machine series (by
// machine-type prefix or suffix) that come with a fixed number of local
// SSDs: on them GKE's ephemeral_storage_local_ssd_config local_ssd_count
// 0 means all the machine's local SSDs; on other machines 0 means none.
// Source: https://cloud.google.com/compute/docs/disks/local-ssd#choose_number_local_ssds
// and the GKE API's EphemeralStorageLocalSsdConfig.local_ssd_count
// (https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/NodeConfig; 2026-12-02).
var gkeFixedLocalSSDSeries = struct{ prefixes, suffixes []string }{
	prefixes: []string{"a3-", "a4-", "a4x-", "a2-ultragpu-", "z3-"},
	suffixes: []string{"-lssd"},
}

// GKEFixedLocalSSDs reports whether GKE machine type mt comes with a fixed
// number of local SSDs (local_ssd_count 0 then means all of them).
func GKEFixedLocalSSDs(mt string) bool {
	for _, p := range gkeFixedLocalSSDSeries.prefixes {
		if strings.HasPrefix(mt, p) {
			return true
		}
	}
	for _, s := range gkeFixedLocalSSDSeries.suffixes {
		if strings.HasSuffix(mt, s) {
			return true
		}
	}
	return false
}
