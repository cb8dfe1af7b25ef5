package helmgen

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/gpuctl/gpuctl/internal/golden"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// admissibleFlavors models Kueue's flavor assignment for a workload
// submitted to LocalQueue lq in namespace ns with requests (resource ->
// quantity): the LocalQueue names a ClusterQueue, whose namespaceSelector
// must match the namespace's labels; every requested resource
// must be covered by one of its resource groups (else the workload is
// inadmissible); within a group, a flavor fits when its nominal quota of
// every requested resource of the group is at least the request. It returns
// the flavors that fit the group covering gpuResource.
// Source: https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/#resource-groups
func admissibleFlavors(m *manifests, ns, lq string, requests map[corev1.ResourceName]int64, gpuResource corev1.ResourceName) []string {
	cqName := ""
	for _, l := range m.local {
		if l.Namespace == ns && l.Name == lq {
			cqName = l.Spec.ClusterQueue
		}
	}
	var cq *ClusterQueue
	for i := range m.queues {
		if m.queues[i].Name == cqName {
			cq = &m.queues[i]
		}
	}
	if cq == nil {
		return nil
	}
	// Kueue admits only from namespaces its namespaceSelector matches.
	sel, err := metav1.LabelSelectorAsSelector(cq.Spec.NamespaceSelector)
	if err != nil {
		return nil
	}
	var nsLabels labels.Set
	for _, n := range m.namespaces {
		if n.Name == ns {
			nsLabels = n.Labels
		}
	}
	if !sel.Matches(nsLabels) {
		return nil
	}
	var out []string
	for r := range requests {
		covered := false
		for _, g := range cq.Spec.ResourceGroups {
			for _, c := range g.CoveredResources {
				covered = covered || c == r
			}
		}
		if !covered {
			return nil // Kueue: the ClusterQueue does not cover a requested resource
		}
	}
	for _, g := range cq.Spec.ResourceGroups {
		if !coversName(g, gpuResource) {
			continue
		}
		for _, f := range g.Flavors {
			fits := true
			for r, n := range requests {
				if !coversName(g, r) {
					continue
				}
				q := int64(0)
				for _, fr := range f.Resources {
					if fr.Name == r {
						q = fr.NominalQuota.Value()
					}
				}
				fits = fits && q >= n
			}
			if fits {
				out = append(out, f.Name)
			}
		}
	}
	return out
}

func coversName(g ResourceGroup, r corev1.ResourceName) bool {
	for _, c := range g.CoveredResources {
		if c == r {
			return true
		}
	}
	return false
}

// flavorPool is the pool whose nodes a flavor selects (its nodeLabels).
func flavorPool(t *testing.T, s *spec.Spec, m *manifests, flavor string) *spec.NodePool {
	t.Helper()
	for _, f := range m.flavors {
		if f.Name == flavor {
			if i, ok := poolIndex(s, func(p *spec.NodePool) string { return p.Name })[f.Spec.NodeLabels[spec.LabelPool]]; ok {
				p := &s.NodePools[i]
				return p
			}
		}
	}
	t.Fatalf("flavor %s selects no pool", flavor)
	return nil
}

// TestWholeGPUNeverOnSharedFlavor: a workload asking for nvidia.com/gpu on
// the teams' LocalQueue gpu is admissible only onto flavors of pools whose
// nvidia.com/gpu are whole GPUs, never onto a time-sliced, MPS or MIG
// flavor; shares and slices are reachable through their own queue
// (gpu-<mode>) or resource name. Over a spec with every sharing mode and
// over every example.
func TestWholeGPUNeverOnSharedFlavor(t *testing.T) {
	pool := func(name string, sharing spec.Sharing) spec.NodePool {
		return spec.NodePool{Name: name, MachineType: "p5.48xlarge", GPU: spec.GPU{Count: 8, Sharing: sharing}, Autoscaling: spec.Autoscaling{Max: 2}}
	}
	mixed := spec.Sharing{Strategy: spec.SharingMIG, MIGProfile: "1g.10gb", MIGStrategy: spec.MIGStrategyMixed}
	all := &spec.ClusterSpec{Metadata: spec.Metadata{Name: "c"}, Spec: spec.Spec{
		Provider: spec.ProviderEKS, Addons: spec.Addons{DevicePlugin: spec.DevicePlugin{Provider: spec.DevicePluginHelm}},
		Teams: []spec.Team{{Name: "t"}},
		NodePools: []spec.NodePool{
			pool("whole", spec.Sharing{}),
			pool("ts", spec.Sharing{Strategy: spec.SharingTimeSlicing, Replicas: 4}),
			pool("ts-renamed", spec.Sharing{Strategy: spec.SharingTimeSlicing, Replicas: 4, RenameByDefault: true}),
			pool("mps", spec.Sharing{Strategy: spec.SharingMPS, Replicas: 2}),
			pool("mig", spec.Sharing{Strategy: spec.SharingMIG, MIGProfile: "1g.10gb"}),
			pool("mig-mixed", mixed),
			func() spec.NodePool { p := pool("efa", spec.Sharing{}); p.EFA.Enabled = true; return p }(),
		},
	}}
	check := func(name string, cs *spec.ClusterSpec, wantWhole []string) {
		s := &cs.Spec
		m, err := buildManifests(cs)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, team := range s.Teams {
			got := admissibleFlavors(m, team.Name, LocalQueueName, map[corev1.ResourceName]int64{ResourceGPU: 1}, ResourceGPU)
			for _, f := range got {
				p := flavorPool(t, s, m, f)
				a, _ := AdvertisedBy(s, p)
				if QueueMode(s, p, a) != "" || (p.SharingStrategy() != spec.SharingNone && s.DevicePluginFor(p) != spec.DevicePluginBottlerocket) {
					t.Errorf("%s: a whole-GPU workload on LocalQueue %s can be admitted onto flavor %s (pool %s, sharing %s)", name, LocalQueueName, f, p.Name, p.SharingStrategy())
				}
			}
			if wantWhole != nil {
				if len(got) != len(wantWhole) {
					t.Errorf("%s: whole-GPU flavors %v, want %v", name, got, wantWhole)
				}
			}
		}
	}
	check("every sharing mode", all, []string{"whole", "efa"})

	// The shares and slices are admissible where they belong.
	m, err := buildManifests(all)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		lq, res string
		want    []string
	}{
		{"gpu-time-slicing", ResourceGPU, []string{"ts"}},
		{"gpu-mps", ResourceGPU, []string{"mps"}},
		{"gpu-mig-1g.10gb", ResourceGPU, []string{"mig"}},
		{LocalQueueName, ResourceGPUShared, []string{"ts-renamed"}},
		{LocalQueueName, "nvidia.com/mig-1g.10gb", []string{"mig-mixed"}},
	} {
		got := admissibleFlavors(m, "t", c.lq, map[corev1.ResourceName]int64{corev1.ResourceName(c.res): 1}, corev1.ResourceName(c.res))
		if len(got) != len(c.want) || (len(got) > 0 && got[0] != c.want[0]) {
			t.Errorf("LocalQueue %s, %s: flavors %v, want %v", c.lq, c.res, got, c.want)
		}
	}
	// An EFA workload is admissible (the ClusterQueue covers
	// vpc.amazonaws.com/efa) and only onto the EFA pool.
	got := admissibleFlavors(m, "t", LocalQueueName, map[corev1.ResourceName]int64{ResourceGPU: 8, ResourceEFA: 32}, ResourceGPU)
	if len(got) != 1 || got[0] != "efa" {
		t.Errorf("EFA workload: flavors %v, want [efa]", got)
	}

	for _, ex := range golden.ValidExamples(t, "../../examples/*.yaml", asOf) {
		check(ex.Dir, ex.Spec, nil)
	}
}

// TestTeamQuotaPerResourceName: the team ResourceQuota has one limit per
// advertised resource name; a renamed time-slicing pool (the values' sharing
// renameByDefault: true) is quota'd as nvidia.com/gpu.shared apart from the
// whole GPUs; where shares are advertised as nvidia.com/gpu, a team's cap
// applies to each mode, so its shares do not use up its whole GPUs.
func TestTeamQuotaPerResourceName(t *testing.T) {
	for _, ex := range golden.ValidExamples(t, "../../examples/*.yaml", asOf) {
		if ex.Dir != "eks-p5-training-efa/base" {
			continue
		}
		l, err := Build(ex.Spec)
		if err != nil {
			t.Fatal(err)
		}
		vs, err := l.Values(Options{})
		if err != nil {
			t.Fatal(err)
		}
		var renamed string
		for _, f := range vs {
			if strings.Contains(string(f.Data), "renameByDefault: true") {
				renamed = f.Name
			}
		}
		if renamed == "" {
			t.Fatal("no chart values set renameByDefault for the renamed pool")
		}
		hard := l.m.quotas[0].Spec.Hard
		shared, whole := hard["requests."+ResourceGPUShared], hard["requests."+ResourceGPU]
		if shared.Value() == 0 || whole.Value() == 0 {
			t.Errorf("hard %v: want separate requests.%s and requests.%s", hard, ResourceGPU, ResourceGPUShared)
		}
		want := map[string]int64{}
		for _, q := range mustQuotas(t, &ex.Spec.Spec) {
			want[q.Advertised.Resource] += int64(q.Total())
		}
		if shared.Value() != want[ResourceGPUShared] || whole.Value() != want[ResourceGPU] {
			t.Errorf("hard %v, pools advertise %v", hard, want)
		}
	}
	byMode := map[string]map[string]int{ResourceGPU: {"": 32, spec.SharingTimeSlicing: 64}, ResourceGPUShared: {"": 16}}
	hard, note := teamQuota(byMode, 10)
	if g, s := hard["requests."+ResourceGPU], hard["requests."+ResourceGPUShared]; g.Value() != 20 || s.Value() != 10 {
		t.Errorf("cap 10: %v, want nvidia.com/gpu 10 whole + 10 time-slices, nvidia.com/gpu.shared 10", hard)
	}
	if !strings.Contains(note, "whole GPUs and time-slicing") || strings.Contains(note, ResourceGPUShared) {
		t.Errorf("note %q", note)
	}
	if hard, note := teamQuota(byMode, 0); hard.Name("requests."+ResourceGPU, resource.DecimalSI).Value() != 96 || note == "" {
		t.Errorf("no cap: %v", hard)
	}
}

func mustQuotas(t *testing.T, s *spec.Spec) []PoolQuota {
	t.Helper()
	q, err := poolQuotas(s)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestQueuedProvisioningAdmissionCheck: on examples/gke-flex-start.yaml the
// ClusterQueue runs the ProvisioningRequest admission check on the queued
// pool's flavor only (the flex-start VMs pool is scaled by the cluster
// autoscaler as usual), the check's config asks for GKE's
// queued-provisioning.gke.io class for nvidia.com/gpu, and the queued
// flavor tolerates the taint GKE puts on queued nodes, as Google's guide
// and cluster-toolkit's dws-queues.yaml.tftpl (commit 1047080) set them;
// an example without queued pools gets no admission check.
func TestQueuedProvisioningAdmissionCheck(t *testing.T) {
	for _, ex := range golden.ValidExamples(t, "../../examples/gke-*.yaml", asOf) {
		m, err := buildManifests(ex.Spec)
		if err != nil {
			t.Fatal(err)
		}
		queued := map[string]bool{}
		for _, p := range ex.Spec.Spec.NodePools {
			if p.Capacity == spec.CapacityQueued {
				queued[objectName(p.Name)] = true
			}
		}
		var on []string
		for _, cq := range m.queues {
			if st := cq.Spec.AdmissionChecksStrategy; st != nil {
				for _, r := range st.AdmissionChecks {
					if r.Name != QueuedProvisioningCheck {
						t.Errorf("%s: ClusterQueue %s runs check %s", ex.Dir, cq.Name, r.Name)
					}
					on = append(on, r.OnFlavors...)
				}
			}
		}
		if len(on) != len(queued) {
			t.Errorf("%s: the check runs on %v, want the queued pools %v", ex.Dir, on, queued)
		}
		for _, f := range on {
			if !queued[f] {
				t.Errorf("%s: the check runs on %s, not a queued pool", ex.Dir, f)
			}
		}
		if len(queued) == 0 {
			if len(m.provisioning) != 0 {
				t.Errorf("%s: no queued pool, yet %d provisioning objects", ex.Dir, len(m.provisioning))
			}
			continue
		}
		if len(m.provisioning) != 2 {
			t.Fatalf("%s: %d provisioning objects, want the config and the check", ex.Dir, len(m.provisioning))
		}
		cfg, ok1 := m.provisioning[0].(ProvisioningRequestConfig)
		ac, ok2 := m.provisioning[1].(AdmissionCheck)
		if !ok1 || !ok2 || cfg.Spec.ProvisioningClassName != "queued-provisioning.gke.io" || len(cfg.Spec.ManagedResources) != 1 || cfg.Spec.ManagedResources[0] != "nvidia.com/gpu" ||
			ac.Spec.ControllerName != "kueue.x-k8s.io/provisioning-request" || ac.Spec.Parameters == nil || ac.Spec.Parameters.Kind != "ProvisioningRequestConfig" || ac.Spec.Parameters.Name != cfg.Name {
			t.Errorf("%s: config %+v, check %+v", ex.Dir, cfg, ac)
		}
		for _, fl := range m.flavors {
			tolerated := false
			for _, tol := range fl.Spec.Tolerations {
				tolerated = tolerated || tol.Key == "cloud.google.com/gke-queued" && tol.Effect == corev1.TaintEffectNoSchedule
			}
			if tolerated != queued[fl.Name] {
				t.Errorf("%s: flavor %s tolerates cloud.google.com/gke-queued: %v", ex.Dir, fl.Name, tolerated)
			}
		}
	}
}
