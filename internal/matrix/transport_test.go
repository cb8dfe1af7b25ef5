package matrix

import (
	"testing"

	"github.com/gpuctl/gpuctl/internal/spec"
)

// TestPoolTransport: the transport follows the machine's fabric and the
// pool's own switch (efa.enabled, nccl.plugin), and the GPU NIC lists come
// from the machine's NICs.
func TestPoolTransport(t *testing.T) {
	for _, c := range []struct {
		provider, machine, plugin string
		efa                       bool
		fabric, key, value        string
	}{
		{"gke", "a3-highgpu-8g", "tcpx", false, FabricTCPX, "NCCL_GPUDIRECTTCPX_SOCKET_IFNAME", "eth1,eth2,eth3,eth4"},
		{"gke", "a3-megagpu-8g", "tcpxo", false, FabricTCPXO, "NCCL_FASTRAK_IFNAME", "eth1,eth2,eth3,eth4,eth5,eth6,eth7,eth8"},
		{"gke", "a3-ultragpu-8g", "gib", false, FabricRoCE, "NCCL_NET", "gIB"},
		{"eks", "p5.48xlarge", "", true, FabricEFA, "FI_PROVIDER", "efa"},
		{"gke", "a3-highgpu-8g", "", false, "", "", ""},     // no plugin: TCP over the primary NIC
		{"gke", "a2-highgpu-8g", "tcpx", false, "", "", ""}, // plugin without the network
		{"eks", "p5.48xlarge", "", false, "", "", ""},       // EFA off
	} {
		tr, ok := PoolTransport(c.provider, &spec.NodePool{MachineType: c.machine, NCCL: spec.NCCL{Plugin: c.plugin}, EFA: spec.EFA{Enabled: c.efa}})
		if ok != (c.fabric != "") || tr.Fabric != c.fabric || (ok && (tr.Env[c.key] != c.value || tr.Source == "")) {
			t.Errorf("%s %s %q efa=%v: %+v, %v", c.provider, c.machine, c.plugin, c.efa, tr, ok)
		}
	}
}
