package fabric

import (
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

func nets(first, n int, prefix string) []Network {
	out := make([]Network, n)
	for i := range out {
		out[i] = Network{Interface: "eth" + strconv.Itoa(first+i), Object: prefix + strconv.Itoa(i+1)}
	}
	return out
}

// TestBuildEFA: a p5.48xlarge pod requests the 32 EFA interfaces, 5120Mi of
// 2 MiB huge pages and 32000Mi of memory, as awsome-distributed-training's
// EFA nccl-tests worker does (micro-benchmarks/nccl-tests/kubernetes/nccl-tests.yaml
// at 7217859f67bc693c52ff175ccc6082c41dbd7a1b), and needs no privilege.
func TestBuildEFA(t *testing.T) {
	p, err := Build(Params{Provider: spec.ProviderEKS, Machine: "p5.48xlarge", GPUs: 8, EFA: 32, HugePages: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[corev1.ResourceName]string{ResourceEFA: "32", ResourceHugePages2Mi: "5120Mi", corev1.ResourceMemory: "32000Mi"}
	for r, q := range want {
		if got := p.Resources[r]; got.Cmp(resource.MustParse(q)) != 0 {
			t.Errorf("%s = %s, want %s", r, got.String(), q)
		}
	}
	if p.Fabric != matrix.FabricEFA || p.Env["FI_PROVIDER"] != "efa" || len(p.Privileged) != 0 || len(p.Sidecars) != 0 {
		t.Errorf("EFA pod: %+v", p)
	}
	noHuge, _ := Build(Params{Provider: spec.ProviderEKS, Machine: "p5.48xlarge", GPUs: 8, EFA: 32})
	if _, ok := noHuge.Resources[ResourceHugePages2Mi]; ok || noHuge.Env["FI_EFA_USE_HUGE_PAGE"] != "0" {
		t.Errorf("without huge pages on the node: %+v", noHuge)
	}
	if _, err := Build(Params{Provider: spec.ProviderEKS, Machine: "p5.48xlarge", GPUs: 8}); err == nil {
		t.Error("an EFA pod without an interface count built")
	}
}

// TestBuildTCPXO: an a3-megagpu-8g pod has the fields of Google's TCPXO
// nccl-test (cluster-toolkit examples/gke-a3-megagpu/nccl-test-latest.yaml
// at 1047080375afbb44da4b596be314634e7486af4a): the tcpxo-daemon sidecar at
// the installer's release, the device injection annotation with the GPUs
// and dmabuf_import_helper, eth0 on the default network and eth1..eth8 on
// the GPU NICs, the driver libraries and aperture devices from the host.
func TestBuildTCPXO(t *testing.T) {
	p, err := Build(Params{Provider: spec.ProviderGKE, Machine: "a3-megagpu-8g", GPUs: 8, Networks: nets(1, 8, "vpc")})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sidecars) != 1 || p.Sidecars[0].Name != "tcpxo-daemon" || !strings.HasSuffix(p.Sidecars[0].Image, "/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.21") {
		t.Fatalf("sidecar: %+v", p.Sidecars)
	}
	if sc := p.Sidecars[0]; sc.RestartPolicy == nil || *sc.RestartPolicy != corev1.ContainerRestartPolicyAlways || !strings.HasSuffix(sc.Command[2], "/fts/entrypoint_rxdm_container.sh --num_hops=2") {
		t.Errorf("sidecar is not a native sidecar running Google's entrypoint: %+v", sc)
	}
	dev := p.Annotations[AnnotationDevicesPrefix+"tcpxo-daemon"]
	for _, d := range []string{"/dev/nvidia0", "/dev/nvidia7", "/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/dmabuf_import_helper"} {
		if !strings.Contains(dev, "- path: "+d+"\n") {
			t.Errorf("device annotation lacks %s: %q", d, dev)
		}
	}
	wantIf := `[{"interfaceName":"eth0","network":"default"},{"interfaceName":"eth1","network":"vpc1"}`
	if got := p.Annotations["networking.gke.io/interfaces"]; !strings.HasPrefix(got, wantIf) || !strings.Contains(got, `{"interfaceName":"eth8","network":"vpc8"}]`) || p.Annotations["networking.gke.io/default-interface"] != "eth0" {
		t.Errorf("interfaces: %q", got)
	}
	paths := map[string]string{}
	for _, v := range p.Volumes {
		paths[v.Name] = v.HostPath.Path
	}
	if paths["nvidia-lib64"] != "/home/kubernetes/bin/nvidia/lib64" || paths["aperture-devices"] != "/dev/aperture_devices" {
		t.Errorf("volumes: %v", paths)
	}
	if p.Env["NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY"] != "/dev/aperture_devices" || p.Env["NCCL_FASTRAK_IFNAME"] != "eth1,eth2,eth3,eth4,eth5,eth6,eth7,eth8" {
		t.Errorf("env: %v", p.Env)
	}
	if len(p.Privileged) == 0 || p.NCCLNets[0] != "FasTrak" {
		t.Errorf("privileged %v, nets %v", p.Privileged, p.NCCLNets)
	}
}

// TestBuildRDMA: an a3-ultragpu-8g pod attaches eth2..eth9 to the RDMA
// networks and mounts the driver and gIB directories, as cluster-toolkit's
// examples/gke-a3-ultragpu/nccl-jobset-example.yaml does, and sources gIB's
// set_nccl_env.sh before NCCL starts.
func TestBuildRDMA(t *testing.T) {
	p, err := Build(Params{Provider: spec.ProviderGKE, Machine: "a3-ultragpu-8g", GPUs: 8, Networks: nets(2, 8, "rdma-")})
	if err != nil {
		t.Fatal(err)
	}
	got := p.Annotations["networking.gke.io/interfaces"]
	if !strings.Contains(got, `{"interfaceName":"eth2","network":"rdma-1"}`) || !strings.Contains(got, `{"interfaceName":"eth9","network":"rdma-8"}`) {
		t.Errorf("interfaces: %s", got)
	}
	mounts := map[string]string{}
	for _, m := range p.Mounts {
		mounts[m.Name] = m.MountPath
	}
	if mounts["gib"] != "/usr/local/gib" || mounts["nvidia"] != "/usr/local/nvidia" || !strings.Contains(p.Prelude, "set_nccl_env.sh") || p.Env["NCCL_NET"] != "gIB" {
		t.Errorf("mounts %v prelude %q env %v", mounts, p.Prelude, p.Env)
	}
	if _, err := Build(Params{Provider: spec.ProviderGKE, Machine: "a3-ultragpu-8g", GPUs: 8}); err == nil {
		t.Error("an RDMA pod without networks built")
	}
}

// TestBuildNoFabric: a machine without a GPU fabric gets the zero Pod,
// which Apply leaves alone.
func TestBuildNoFabric(t *testing.T) {
	p, err := Build(Params{Provider: spec.ProviderEKS, Machine: "g6.xlarge", GPUs: 1})
	if err != nil || p.Fabric != "" {
		t.Fatalf("g6.xlarge: %+v %v", p, err)
	}
	var ps corev1.PodSpec
	c := corev1.Container{Name: "x"}
	if a := p.Apply(&ps, &c, nil); a != nil || len(c.Env) != 0 || len(ps.Volumes) != 0 {
		t.Errorf("Apply changed a pod without fabric: %v %+v", a, c)
	}
}

// TestApplyKeepsContainerEnv: a variable the container sets (the spec's
// nccl.env) is not overridden by the fabric's.
func TestApplyKeepsContainerEnv(t *testing.T) {
	p, _ := Build(Params{Provider: spec.ProviderEKS, Machine: "p5.48xlarge", GPUs: 8, EFA: 32})
	c := corev1.Container{Env: []corev1.EnvVar{{Name: "FI_PROVIDER", Value: "mine"}}}
	var ps corev1.PodSpec
	p.Apply(&ps, &c, nil)
	n := 0
	for _, e := range c.Env {
		if e.Name == "FI_PROVIDER" {
			n++
			if e.Value != "mine" {
				t.Errorf("FI_PROVIDER = %s", e.Value)
			}
		}
	}
	if n != 1 {
		t.Errorf("FI_PROVIDER set %d times", n)
	}
	if q := c.Resources.Requests[ResourceEFA]; q.String() != "32" {
		t.Errorf("requests: %v", c.Resources.Requests)
	}
}

// TestChooseNetworks: the node's networks become the pod's GPU NICs when
// they are as many as the fabric needs; RDMA prefers the rdma-named ones
// (Google's blueprints attach gvnic-1 beside rdma-0..rdma-7); the spec's
// names must all be attached.
func TestChooseNetworks(t *testing.T) {
	rdma := []string{"gvnic-1", "rdma-0", "rdma-1", "rdma-2", "rdma-3", "rdma-4", "rdma-5", "rdma-6", "rdma-7"}
	got, err := ChooseNetworks(rdma, nil, Needs{Fabric: matrix.FabricRoCE, Networks: 8, RDMA: true})
	if err != nil || len(got) != 8 || got[0] != (Network{"eth2", "rdma-0"}) || got[7] != (Network{"eth9", "rdma-7"}) {
		t.Errorf("rdma: %v %v", got, err)
	}
	if _, err := ChooseNetworks([]string{"vpc1", "vpc2"}, nil, Needs{Fabric: matrix.FabricTCPXO, Networks: 8}); err == nil || !strings.Contains(err.Error(), "attached to 2 GPU network(s)") {
		t.Errorf("too few: %v", err)
	}
	if _, err := ChooseNetworks([]string{"vpc1"}, []Network{{"eth1", "vpc1"}, {"eth2", "vpc2"}}, Needs{Fabric: matrix.FabricTCPX, Networks: 2}); err == nil || !strings.Contains(err.Error(), "vpc2") {
		t.Errorf("spec network missing: %v", err)
	}
	nodeCap := corev1.ResourceList{"networking.gke.io.networks/vpc10": {}, "networking.gke.io.networks/vpc2": {}, "networking.gke.io.networks/vpc2.IP": {}, "networking.gke.io.networks/default": {}, "nvidia.com/gpu": {}}
	if got := NetworksOf(nodeCap); strings.Join(got, ",") != "vpc2,vpc10" {
		t.Errorf("NetworksOf = %v", got)
	}
}

// TestSidecarOfInstallerRelease: each TCPX/TCPXO pod runs the sidecar of
// the matrix row whose installer generate deploys (the TCPXO pair of the
// Jan 9, 2026 release: tcpgpudmarxd-dev v1.0.21 beside installer v1.0.15).
func TestSidecarOfInstallerRelease(t *testing.T) {
	for _, c := range []struct {
		machine, tag string
		nics         int
	}{{"a3-megagpu-8g", "tcpgpudmarxd-dev:v1.0.21", 8}, {"a3-highgpu-8g", "tcpgpudmarxd-dev:v2.0.12", 4}} {
		p, err := Build(Params{Provider: spec.ProviderGKE, Machine: c.machine, GPUs: 8, Networks: nets(1, c.nics, "vpc")})
		if err != nil {
			t.Fatal(err)
		}
		im, _ := matrix.FabricImages(p.Fabric)
		if got := p.Sidecars[0].Image; got != im.RxDM || !strings.HasSuffix(got, c.tag) || !strings.Contains(im.Installer, "nccl-plugin-gpudirecttcpx-dev:") {
			t.Errorf("%s: sidecar %s, matrix row %+v", c.machine, got, im)
		}
	}
}

// TestNeedsOf: what each fabric needs of a node comes from the layout
// generate uses: 32 EFA interfaces on p5 (required: it has a multi-node
// baseline), EFA optional on g6.8xlarge, 8 GPU networks on A3 Mega, 8 RDMA
// networks on A3 Ultra, nothing on a machine without a fabric.
func TestNeedsOf(t *testing.T) {
	for _, c := range []struct {
		provider, machine string
		want              Needs
	}{
		{spec.ProviderEKS, "p5.48xlarge", Needs{Fabric: matrix.FabricEFA, EFA: 32}},
		{spec.ProviderEKS, "g6.8xlarge", Needs{Fabric: matrix.FabricEFA, EFA: 1, OptionalEFA: true}},
		{spec.ProviderGKE, "a3-megagpu-8g", Needs{Fabric: matrix.FabricTCPXO, Networks: 8}},
		{spec.ProviderGKE, "a3-ultragpu-8g", Needs{Fabric: matrix.FabricRoCE, Networks: 8, RDMA: true}},
		{spec.ProviderGKE, "g2-standard-24", Needs{}},
		{spec.ProviderEKS, "g6.xlarge", Needs{}},
	} {
		if got := NeedsOf(c.provider, c.machine); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.machine, got, c.want)
		}
	}
}
