package report

import (
	"context"
	"testing"

	"github.com/gpuctl/gpuctl/internal/record"
)

// TestNodeSystem: the per-node model carries what the record holds of the
// practice's template beyond the GPUs: the Node's OS image, kernel,
// container runtime and kubelet, the RDMA NICs with model and firmware,
// the baselines met and the evidence URI (the A3 Ultra fixture, verified).
func TestNodeSystem(t *testing.T) {
	in := input(t, "records", "a3u-network.dsse.json")
	r, err := Build(context.Background(), []Input{in}, testKey(t))
	if err != nil {
		t.Fatal(err)
	}
	f, err := record.Decode(in.Path, in.Data)
	if err != nil {
		t.Fatal(err)
	}
	p, s := f.Predicate, r.Nodes[0].System
	if !r.Nodes[0].Verified {
		t.Fatalf("not verified: %v", r.Nodes[0].Problems)
	}
	for _, c := range []struct{ name, got, want string }{
		{"OS image", s.OSImage, p.Node.OSImage}, {"kernel", s.Kernel, p.Node.KernelVersion},
		{"container runtime", s.ContainerRuntime, p.Node.ContainerRuntime}, {"kubelet", s.Kubelet, p.Node.Kubelet},
		{"device plugin", s.DevicePlugin, p.Node.DevicePlugin}, {"evidence URI", s.EvidenceURI, p.EvidenceBundle.URI},
	} {
		if c.want == "" || c.got != c.want {
			t.Errorf("%s %q, want the record's %q", c.name, c.got, c.want)
		}
	}
	if len(s.NICs) != len(p.Network.Devices) || len(s.NICs) == 0 || s.NICs[0].Model == "" || s.NICs[0].Firmware != p.Network.Devices[0].Firmware {
		t.Errorf("NICs %+v, want the record's %d devices", s.NICs, len(p.Network.Devices))
	}
	if len(s.Baselines) != 1 || s.Baselines[0].Stage != "network" || !s.Baselines[0].Met {
		t.Errorf("baselines %+v, want the network port rate met", s.Baselines)
	}
	// A record of another run keeps its own: the H100 run's nccl baseline,
	// no NICs, no evidence URI.
	r, err = Build(context.Background(), []Input{input(t, "records", "h100-nccl-fail.dsse.json")}, testKey(t))
	if err != nil {
		t.Fatal(err)
	}
	s = r.Nodes[0].System
	if len(s.Baselines) != 1 || s.Baselines[0].Stage != "nccl" || s.Baselines[0].Met || len(s.NICs) != 0 || s.EvidenceURI != "" {
		t.Errorf("h100-nccl-fail: %+v, want one unmet nccl baseline and no NICs or URI", s)
	}
}
