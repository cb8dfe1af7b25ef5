package helmgen

import (
	"strconv"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/golden"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// TestKarpenterPools: for every shipped example whose pools Karpenter
// launches, each pool gets a NodePool and an EC2NodeClass of its name
// with its instance types, capacity type (reserved and capacity-block for
// a Capacity Block, whose reservation the node class selects), zones,
// taints, node labels, GPU limit (max x GPUs per node), consolidation of
// empty nodes only on training pools, root disk, RAID0
// and efa-only interfaces; and the rules the CRDs' CEL validations hold
// that the JSON schema check cannot see: one primary interface on card 0,
// at most one efa-only interface per card, no duplicate card and device.
func TestKarpenterPools(t *testing.T) {
	n := 0
	for _, ex := range golden.ValidExamples(t, "../../examples/*.yaml", asOf) {
		objs, err := buildKarpenter(ex.Spec)
		if err != nil {
			t.Fatal(err)
		}
		s := &ex.Spec.Spec
		if !UsesKarpenter(s) {
			if len(objs) != 0 {
				t.Errorf("%s: Karpenter objects for a spec without addons.autoscaler karpenter", ex.Dir)
			}
			continue
		}
		if len(objs) != 2*len(s.NodePools) {
			t.Fatalf("%s: %d objects for %d pools", ex.Dir, len(objs), len(s.NodePools))
		}
		for i := range s.NodePools {
			n++
			checkKarpenterPool(t, ex.Dir, s, &s.NodePools[i], objs[2*i].(kpNodePool), objs[2*i+1].(kpEC2NodeClass))
		}
	}
	if n < 2 {
		t.Errorf("%d Karpenter pools in the examples, want at least 2", n)
	}
}

func checkKarpenterPool(t *testing.T, ex string, s *spec.Spec, p *spec.NodePool, np kpNodePool, nc kpEC2NodeClass) {
	t.Helper()
	what := ex + " " + p.Name
	if np.Metadata.Name != p.Name || nc.Metadata.Name != p.Name || np.Spec.Template.Spec.NodeClassRef.Name != p.Name {
		t.Errorf("%s: names %s / %s / ref %s", what, np.Metadata.Name, nc.Metadata.Name, np.Spec.Template.Spec.NodeClassRef.Name)
	}
	reqs := map[string][]string{}
	for _, r := range np.Spec.Template.Spec.Requirements {
		if r.Operator != "In" {
			t.Errorf("%s: requirement %s operator %s", what, r.Key, r.Operator)
		}
		reqs[r.Key] = r.Values
	}
	if got := strings.Join(reqs["node.kubernetes.io/instance-type"], ","); got != strings.Join(p.MachineTypes(), ",") {
		t.Errorf("%s: instance types %s", what, got)
	}
	want := map[string]string{spec.CapacityOnDemand: "on-demand", spec.CapacitySpot: "spot", spec.CapacityReservation: "reserved", spec.CapacityCapacityBlock: "reserved"}[p.Capacity]
	if got := strings.Join(reqs[karpenterCapacityType], ","); got != want {
		t.Errorf("%s: capacity type %s, want %s", what, got, want)
	}
	if p.Capacity == spec.CapacityCapacityBlock {
		if strings.Join(reqs[karpenterReservationType], ",") != "capacity-block" || len(nc.Spec.CapacityReservationSelectorTerms) != 1 || nc.Spec.CapacityReservationSelectorTerms[0].ID != p.Reservation {
			t.Errorf("%s: Capacity Block: reservation type %v, terms %+v", what, reqs[karpenterReservationType], nc.Spec.CapacityReservationSelectorTerms)
		}
	}
	if strings.Join(reqs["topology.kubernetes.io/zone"], ",") != strings.Join(p.Zones, ",") {
		t.Errorf("%s: zones %v", what, reqs["topology.kubernetes.io/zone"])
	}
	if len(np.Spec.Template.Spec.Taints) != len(p.Taints) {
		t.Errorf("%s: taints %+v", what, np.Spec.Template.Spec.Taints)
	}
	for k, v := range s.NodeLabels(p) {
		if np.Spec.Template.Metadata.Labels[k] != v {
			t.Errorf("%s: label %s = %q, want %q", what, k, np.Spec.Template.Metadata.Labels[k], v)
		}
	}
	if training := p.Role == spec.RoleTraining; training != (np.Spec.Disruption != nil && np.Spec.Disruption.ConsolidationPolicy == "WhenEmpty") {
		t.Errorf("%s: role %s, disruption %+v", what, p.Role, np.Spec.Disruption)
	}
	gpus, _ := matrix.PoolGPUsPerNode(s.Provider, p)
	if got, want := np.Spec.Limits[ResourceGPU], itoa(p.Autoscaling.Max*gpus); got != want {
		t.Errorf("%s: limit nvidia.com/gpu %s, want %s", what, got, want)
	}
	if p.DiskSizeGB > 0 {
		last := nc.Spec.BlockDeviceMappings[len(nc.Spec.BlockDeviceMappings)-1]
		if last.EBS.VolumeSize != itoa(p.DiskSizeGB)+"Gi" {
			t.Errorf("%s: volume %+v", what, last)
		}
	}
	if eff := matrix.EffectiveLocalStorage(spec.ProviderEKS, p); (eff == spec.LocalStorageRAID0) != (nc.Spec.InstanceStorePolicy == "RAID0") {
		t.Errorf("%s: effective localStorage %q, instanceStorePolicy %q", what, eff, nc.Spec.InstanceStorePolicy)
	}
	checkInterfaces(t, what, p, nc.Spec.NetworkInterfaces)
	for _, sel := range [][]kpTagTerm{nc.Spec.SubnetSelectorTerms, nc.Spec.SecurityGroupSelectorTerms} {
		if len(sel) != 1 || sel[0].Tags[karpenterDiscoveryTag] != s.ClusterName {
			t.Errorf("%s: selector %+v, want the discovery tag %s", what, sel, s.ClusterName)
		}
	}
}

// checkInterfaces holds an efa-only pool's interfaces to its network cards
// and to the EC2NodeClass CRD's CEL rules.
func checkInterfaces(t *testing.T, what string, p *spec.NodePool, nis []kpNetworkInterface) {
	t.Helper()
	if !p.EFA.Enabled || !p.EFA.EFAOnlyCards() {
		if len(nis) != 0 {
			t.Errorf("%s: interfaces without efa-only cards: %+v", what, nis)
		}
		return
	}
	cards, _ := matrix.PoolEFAInterfaces(spec.ProviderEKS, p)
	primary, efa, seen := 0, map[int]int{}, map[[2]int]bool{}
	for _, ni := range nis {
		if seen[[2]int{ni.NetworkCardIndex, ni.DeviceIndex}] {
			t.Errorf("%s: card %d device %d twice", what, ni.NetworkCardIndex, ni.DeviceIndex)
		}
		seen[[2]int{ni.NetworkCardIndex, ni.DeviceIndex}] = true
		switch {
		case ni.InterfaceType == "interface" && ni.NetworkCardIndex == 0 && ni.DeviceIndex == 0:
			primary++
		case ni.InterfaceType == "efa-only":
			efa[ni.NetworkCardIndex]++
		default:
			t.Errorf("%s: interface %+v", what, ni)
		}
	}
	if primary != 1 || len(efa) != cards {
		t.Errorf("%s: %d primary interfaces, efa-only on %d cards, want 1 and %d", what, primary, len(efa), cards)
	}
	for c, k := range efa {
		if k != 1 || c >= cards {
			t.Errorf("%s: card %d has %d efa-only interfaces", what, c, k)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestKarpenterNodeClassVariants: Bottlerocket keeps its 4 GiB OS volume
// and gets diskSizeGB as its data volume (/dev/xvdb), as the importer reads
// it; a named placement group is selected by name; an AMI type Karpenter
// has no alias for is an error; a spec without
// addons.autoscaler karpenter gets no file.
func TestKarpenterNodeClassVariants(t *testing.T) {
	cs := &spec.ClusterSpec{Metadata: spec.Metadata{Name: "k"}, Spec: spec.Spec{Provider: spec.ProviderEKS, ClusterName: "c", Region: "us-east-1",
		Addons:    spec.Addons{Autoscaler: spec.AutoscalerKarpenter},
		NodePools: []spec.NodePool{{Name: "pool", MachineType: "g6.xlarge", Autoscaling: spec.Autoscaling{Max: 4}}}}}
	p := &cs.Spec.NodePools[0]
	p.OSImage, p.DiskSizeGB, p.PlacementGroup = "BOTTLEROCKET_x86_64_NVIDIA", 300, "team-pg"
	cs.Spec.Addons.DevicePlugin = spec.DevicePlugin{Provider: spec.DevicePluginBottlerocket}
	objs, err := buildKarpenter(cs)
	if err != nil {
		t.Fatal(err)
	}
	nc := objs[1].(kpEC2NodeClass)
	if nc.Spec.AMISelectorTerms[0].Alias != "bottlerocket@latest" || len(nc.Spec.BlockDeviceMappings) != 2 ||
		nc.Spec.BlockDeviceMappings[0].EBS.VolumeSize != "4Gi" || nc.Spec.BlockDeviceMappings[1].DeviceName != "/dev/xvdb" || nc.Spec.BlockDeviceMappings[1].EBS.VolumeSize != "300Gi" {
		t.Errorf("Bottlerocket node class: %+v", nc.Spec)
	}
	if nc.Spec.Role != "KarpenterNodeRole-c" || nc.Spec.MetadataOptions == nil || nc.Spec.MetadataOptions.HTTPTokens != "required" || nc.Spec.MetadataOptions.HTTPPutResponseHopLimit != 2 {
		t.Errorf("default role %q, metadata options %+v", nc.Spec.Role, nc.Spec.MetadataOptions)
	}
	cs.Spec.Addons.Karpenter.NodeRole = "Karpenter-c-20261203"
	if objs, err := buildKarpenter(cs); err != nil || objs[1].(kpEC2NodeClass).Spec.Role != "Karpenter-c-20261203" {
		t.Errorf("addons.karpenter.nodeRole not used: %v", err)
	}
	if nc.Spec.PlacementGroupSelector == nil || nc.Spec.PlacementGroupSelector.Name != "team-pg" {
		t.Errorf("placement group: %+v", nc.Spec.PlacementGroupSelector)
	}
	// The group is the managed node groups' (spec.EKSPlacementGroup): none
	// for "none", gpuctl's cluster group by default for an EFA training
	// pool in one zone.
	for _, c := range []struct {
		pg, role string
		efa      bool
		want     string
	}{
		{spec.PlacementGroupNone, spec.RoleTraining, true, ""},
		{"", spec.RoleTraining, true, "c-pool"},
		{"", spec.RoleInference, false, ""},
	} {
		p.PlacementGroup, p.Role, p.EFA.Enabled, p.Zones = c.pg, c.role, c.efa, []string{"us-east-1a"}
		if got := KarpenterPlacementGroup(&cs.Spec, p); got != c.want {
			t.Errorf("placementGroup %q, role %s, EFA %v: the EC2NodeClass selects %q, want %q", c.pg, c.role, c.efa, got, c.want)
		}
	}
	p.PlacementGroup, p.Role, p.EFA.Enabled, p.Zones = "team-pg", "", false, nil
	p.OSImage = "AL2_x86_64_GPU"
	if _, err := buildKarpenter(cs); err == nil || !strings.Contains(err.Error(), "AMI aliases") {
		t.Errorf("AL2 AMI: %v, want an error", err)
	}
	cs.Spec.Addons.Autoscaler = spec.AutoscalerClusterAutoscaler
	if fs, err := Karpenter(cs, Options{}); err != nil || len(fs) != 0 {
		t.Errorf("cluster-autoscaler spec: %d files, %v", len(fs), err)
	}
}

// TestKarpenterReleaseVersionNote: a pinned releaseVersion, which the AMI
// alias does not carry, is named in the file's header.
func TestKarpenterReleaseVersionNote(t *testing.T) {
	cs := &spec.ClusterSpec{Metadata: spec.Metadata{Name: "k"}, Spec: spec.Spec{Provider: spec.ProviderEKS, ClusterName: "c", Region: "us-east-1",
		Addons:    spec.Addons{Autoscaler: spec.AutoscalerKarpenter},
		NodePools: []spec.NodePool{{Name: "pool", MachineType: "g6.xlarge", ReleaseVersion: "1.34.2-20251108", Autoscaling: spec.Autoscaling{Max: 4}}}}}
	fs, err := Karpenter(cs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 || !strings.Contains(string(fs[0].Data), "# Pool pool: releaseVersion 1.34.2-20251108 is a managed node group setting and is not written") {
		t.Errorf("no releaseVersion note in:\n%s", fs[0].Data)
	}
}

// TestKarpenterLocalStorage: in the shipped Karpenter example the p5
// training pool's node class says instanceStorePolicy: RAID0 and the L4
// inference pool's says nothing; RAID0 stays when the training pool's
// localStorage is unset (on by default: p5 has NVMe instance store),
// goes with localStorage none, comes for an L4 pool made a training pool
// (g6 has NVMe too), and is not written for raid0 on g5g (EBS only).
func TestKarpenterLocalStorage(t *testing.T) {
	exs := golden.ValidExamples(t, "../../examples/eks-karpenter-gpu.yaml", asOf)
	if len(exs) == 0 {
		t.Fatal("no eks-karpenter-gpu example")
	}
	cs := exs[0].Spec
	fs, err := Karpenter(cs, Options{})
	if err != nil || len(fs) != 1 || !strings.Contains(string(fs[0].Data), "\n  instanceStorePolicy: RAID0\n") {
		t.Fatalf("karpenter.yaml has no instanceStorePolicy: RAID0 (%v)", err)
	}
	policies := func() map[string]string {
		t.Helper()
		objs, err := buildKarpenter(cs)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, o := range objs {
			if nc, ok := o.(kpEC2NodeClass); ok {
				out[nc.Metadata.Name] = nc.Spec.InstanceStorePolicy
			}
		}
		return out
	}
	train, infer := poolNamed(t, cs, "train-p5-cb"), poolNamed(t, cs, "infer-l4")
	steps := []struct {
		what         string
		mod          func()
		train, infer string
	}{
		{"as shipped", func() {}, "RAID0", ""},
		{"training pool's localStorage unset", func() { train.LocalStorage = "" }, "RAID0", ""},
		{"training pool's localStorage none", func() { train.LocalStorage = spec.LocalStorageNone }, "", ""},
		{"L4 pool as a training pool", func() { infer.Role = spec.RoleTraining }, "", "RAID0"},
		{"raid0 asked on g5g", func() {
			infer.InstanceTypes, infer.OSImage, infer.LocalStorage = []string{"g5g.xlarge"}, "AL2023_ARM_64_NVIDIA", spec.LocalStorageRAID0
		}, "", ""},
	}
	for _, st := range steps {
		st.mod()
		got := policies()
		if got["train-p5-cb"] != st.train || got["infer-l4"] != st.infer {
			t.Errorf("%s: instanceStorePolicy train-p5-cb %q, infer-l4 %q; want %q, %q", st.what, got["train-p5-cb"], got["infer-l4"], st.train, st.infer)
		}
	}
}

// poolNamed is cs's pool of that name.
func poolNamed(t *testing.T, cs *spec.ClusterSpec, name string) *spec.NodePool {
	t.Helper()
	for i := range cs.Spec.NodePools {
		if cs.Spec.NodePools[i].Name == name {
			return &cs.Spec.NodePools[i]
		}
	}
	t.Fatalf("no pool %s", name)
	return nil
}
