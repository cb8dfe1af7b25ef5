package matrix

import (
	"strings"
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

// TestMachineEnv: every machine type's NCCL settings name a GKE machine
// type of that GPU network, with source and date; A3 High gets Google's
// TX/RX bindings, which bind exactly its GPU NICs (the NICs of
// NCCL_GPUDIRECTTCPX_SOCKET_IFNAME); A3 Mega its FasTrak settings; the
// fabric's own variables stay.
func TestMachineEnv(t *testing.T) {
	for _, me := range cat().nccl.MachineEnv {
		m, ok := LookupMachine(spec.ProviderGKE, me.Machine)
		if !ok || m.Fabric != me.Fabric || me.Source == "" || me.AsOf == "" || len(me.Env) == 0 {
			t.Errorf("machine_env %s (%s): machine %+v found %v, source %q, as_of %q", me.Machine, me.Fabric, m, ok, me.Source, me.AsOf)
		}
	}
	tcpx, _ := PoolTransport(spec.ProviderGKE, &spec.NodePool{MachineType: "a3-highgpu-8g", NCCL: spec.NCCL{Plugin: "tcpx"}})
	nics := strings.Split(tcpx.Env["NCCL_GPUDIRECTTCPX_SOCKET_IFNAME"], ",")
	for _, k := range []string{"NCCL_GPUDIRECTTCPX_TX_BINDINGS", "NCCL_GPUDIRECTTCPX_RX_BINDINGS"} {
		var bound []string
		for _, b := range strings.Split(tcpx.Env[k], ";") {
			nic, cpus, ok := strings.Cut(b, ":")
			if !ok || cpus == "" {
				t.Errorf("%s: %q is not NIC:CPUs", k, b)
			}
			bound = append(bound, nic)
		}
		if strings.Join(bound, ",") != strings.Join(nics, ",") {
			t.Errorf("%s binds %v, the GPU NICs are %v", k, bound, nics)
		}
	}
	if tcpx.Env["NCCL_GPUDIRECTTCPX_CTRL_DEV"] != "eth0" || !strings.Contains(tcpx.Source, "nccl-config.yaml") {
		t.Errorf("tcpx env %v, source %q", tcpx.Env, tcpx.Source)
	}
	tcpxo, _ := PoolTransport(spec.ProviderGKE, &spec.NodePool{MachineType: "a3-megagpu-8g", NCCL: spec.NCCL{Plugin: "tcpxo"}})
	for k, want := range map[string]string{"NCCL_FASTRAK_CTRL_DEV": "eth0", "NCCL_FASTRAK_USE_LLCM": "1", "NCCL_TUNER_PLUGIN": "libnccl-tuner.so", "NCCL_FASTRAK_IFNAME": "eth1,eth2,eth3,eth4,eth5,eth6,eth7,eth8"} {
		if tcpxo.Env[k] != want {
			t.Errorf("tcpxo %s = %q, want %q", k, tcpxo.Env[k], want)
		}
	}
	if _, ok := tcpxo.Env["CUDA_VISIBLE_DEVICES"]; ok {
		t.Error("CUDA_VISIBLE_DEVICES reached the workloads' environment")
	}
	edge, _ := PoolTransport(spec.ProviderGKE, &spec.NodePool{MachineType: "a3-edgegpu-8g", NCCL: spec.NCCL{Plugin: "tcpx"}})
	if _, ok := edge.Env["NCCL_GPUDIRECTTCPX_TX_BINDINGS"]; ok {
		t.Error("a3-edgegpu-8g got A3 High's CPU bindings")
	}
}

// TestPoolNICs: the additional NICs of a GKE pool follow its machine's
// network interfaces and its plugin: TCPX/TCPXO GPU NICs, RDMA NICs after
// the second gVNIC on A3 Ultra and A4, none without the plugin, on A4X
// (RDMA NICs not counted) or on EKS.
func TestPoolNICs(t *testing.T) {
	for _, c := range []struct {
		provider, machine, plugin string
		want                      spec.NICLayout
	}{
		{"gke", "a3-highgpu-8g", "tcpx", spec.NICLayout{GPU: 4}},
		{"gke", "a3-megagpu-8g", "tcpxo", spec.NICLayout{GPU: 8}},
		{"gke", "a3-ultragpu-8g", "gib", spec.NICLayout{GVNICs: 1, GPU: 8, RDMA: true}},
		{"gke", "a4-highgpu-8g", "gib", spec.NICLayout{GVNICs: 1, GPU: 8, RDMA: true}},
		{"gke", "a3-ultragpu-8g", "", spec.NICLayout{}},
		{"gke", "a3-ultragpu-8g", "tcpxo", spec.NICLayout{}},
		{"gke", "a3-megagpu-8g", "gib", spec.NICLayout{}},
		{"gke", "a4x-highgpu-4g", "gib", spec.NICLayout{}},
		{"eks", "p5.48xlarge", "gib", spec.NICLayout{}},
	} {
		p := &spec.NodePool{MachineType: c.machine, NCCL: spec.NCCL{Plugin: c.plugin}}
		if got := PoolNICs(c.provider, p); got != c.want {
			t.Errorf("%s %s %q: %+v, want %+v", c.provider, c.machine, c.plugin, got, c.want)
		}
		if got := PoolGPUNICs(c.provider, p); got != c.want.GPU {
			t.Errorf("%s %s %q: PoolGPUNICs %d, want %d", c.provider, c.machine, c.plugin, got, c.want.GPU)
		}
	}
}

// TestPoolNCCLTransportEnv: TCPX variables on a pool without nccl.plugin
// name the transport they configure, not a plugin present; NCCL_NET=gIB on
// an RDMA machine selects the gIB plugin.
func TestPoolNCCLTransportEnv(t *testing.T) {
	s := &spec.Spec{Provider: spec.ProviderGKE}
	tcpx := PoolNCCLTransport(s, &spec.NodePool{MachineType: "a3-highgpu-8g", NCCL: spec.NCCL{Env: map[string]string{"NCCL_GPUDIRECTTCPX_CTRL_DEV": "eth0"}}})
	if tcpx.Plugin != "" || tcpx.EnvPlugin != "tcpx" || tcpx.Want != "tcpx" {
		t.Errorf("TCPX env without plugin = %+v", tcpx)
	}
	named := PoolNCCLTransport(s, &spec.NodePool{MachineType: "a3-highgpu-8g", NCCL: spec.NCCL{Plugin: "tcpx", Env: map[string]string{"NCCL_GPUDIRECTTCPX_CTRL_DEV": "eth0"}}})
	if named.Plugin != "tcpx" || named.EnvPlugin != "" {
		t.Errorf("TCPX env with plugin = %+v", named)
	}
	gib := PoolNCCLTransport(s, &spec.NodePool{MachineType: "a4-highgpu-8g", NCCL: spec.NCCL{Env: map[string]string{"NCCL_NET": "gIB"}}})
	if gib.Plugin != "gib" {
		t.Errorf("NCCL_NET=gIB on A4 = %+v", gib)
	}
}

// TestFabricImages: the TCPXO row pairs the installer gpuctl pins with the
// RxDM sidecar of the same release (container-engine-accelerators
// gpudirect-tcpxo/README.md, "Jan 9, 2026": installer v1.0.15,
// tcpgpudmarxd-dev v1.0.21), TCPX's its nccl-test-latest.yaml pair, RDMA
// has an installer and no sidecar, and EFA no row.
func TestFabricImages(t *testing.T) {
	for _, c := range []struct{ fabric, installer, rxdm string }{
		{FabricTCPXO, "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.15", "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.21"},
		{FabricTCPX, "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpx/nccl-plugin-gpudirecttcpx-dev:v3.1.9", "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpx/tcpgpudmarxd-dev:v2.0.12"},
		{FabricRoCE, "us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib:v1.1.1", ""},
	} {
		im, ok := FabricImages(c.fabric)
		if !ok || im.Installer != c.installer || im.RxDM != c.rxdm || len(im.Sources) == 0 || im.AsOf == "" {
			t.Errorf("%s: %+v, want installer %s with sidecar %q and a source", c.fabric, im, c.installer, c.rxdm)
		}
	}
	if _, ok := FabricImages(FabricEFA); ok {
		t.Error("EFA has GPUDirect images")
	}
}
