package helmgen

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/gpuctl/gpuctl/internal/golden"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// splitDocs splits a generated multi-document YAML file.
func splitDocs(data []byte) [][]byte {
	var out [][]byte
	for _, d := range bytes.Split(data, []byte("\n---\n")) {
		d = bytes.TrimPrefix(d, []byte("---\n"))
		if len(bytes.TrimSpace(stripComments(d))) > 0 {
			out = append(out, d)
		}
	}
	return out
}

func stripComments(d []byte) []byte {
	var b bytes.Buffer
	for _, l := range bytes.Split(d, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(l), []byte("#")) {
			b.Write(l)
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// TestCoreObjectsDecodeStrictly decodes every Kubernetes core object the
// manifests layer writes (Namespaces, ResourceQuotas, NetworkPolicies,
// ConfigMaps, DaemonSets) with client-go's scheme and a strict decoder: an
// unknown or duplicate field, a wrong type or an unregistered kind fails.
// The Kueue and GKE networking kinds are CRDs, not in the scheme
// (TestCustomResourcesMatchCRDs checks them).
func TestCoreObjectsDecodeStrictly(t *testing.T) {
	dec := kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme.Scheme, scheme.Scheme, kjson.SerializerOptions{Yaml: true, Strict: true})
	kinds := map[string]int{}
	for _, ex := range golden.ValidExamples(t, "../../examples/*.yaml", asOf) {
		ms, err := Manifests(ex.Spec, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ms {
			for _, doc := range splitDocs(f.Data) {
				var tm metav1.TypeMeta
				if err := yaml.Unmarshal(doc, &tm); err != nil {
					t.Fatalf("%s %s: %v", ex.Dir, f.Name, err)
				}
				if !scheme.Scheme.Recognizes(tm.GroupVersionKind()) {
					continue // a custom resource: TestCustomResourcesMatchCRDs
				}
				obj, gvk, err := dec.Decode(doc, nil, nil)
				if err != nil {
					t.Errorf("%s %s: %s: %v", ex.Dir, f.Name, tm.Kind, err)
					continue
				}
				if _, isUnknown := obj.(*runtime.Unknown); isUnknown || gvk.Kind != tm.Kind {
					t.Errorf("%s %s: decoded %v as %T", ex.Dir, f.Name, gvk, obj)
				}
				kinds[gvk.Kind]++
			}
		}
	}
	for _, k := range []string{"Namespace", "ResourceQuota", "NetworkPolicy", "ConfigMap", "DaemonSet"} {
		if kinds[k] == 0 {
			t.Errorf("no %s decoded: the examples do not exercise it", k)
		}
	}
	// The strict decoder does fail: an unknown field.
	if _, _, err := dec.Decode([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndatum: {}\n"), nil, nil); err == nil {
		t.Error("strict decoding accepted an unknown field")
	}
}

func gkePool(name, machine, plugin string) spec.NodePool {
	return spec.NodePool{Name: name, Role: spec.RoleTraining, MachineType: machine, Autoscaling: spec.Autoscaling{Max: 2},
		GPU: spec.GPU{Count: 8}, NCCL: spec.NCCL{Plugin: plugin}}
}

// TestNCCLLayer: each transport gets its variables and its components,
// nccl.env wins over the transport's variables, and the components select
// exactly their pools and tolerate their taints (GKE's own GPU taint too).
func TestNCCLLayer(t *testing.T) {
	tcpx := gkePool("tcpx", "a3-highgpu-8g", "tcpx")
	tcpx.NCCL.Env = map[string]string{"NCCL_SOCKET_IFNAME": "=eth0", "NCCL_DEBUG": "WARN"}
	tcpx.Taints = []spec.Taint{{Key: "team", Value: "ml", Effect: "NoExecute"}}
	s := &spec.Spec{Provider: spec.ProviderGKE, Teams: []spec.Team{{Name: "a"}, {Name: "b"}}, NodePools: []spec.NodePool{
		tcpx, gkePool("tcpxo", "a3-megagpu-8g", "tcpxo"), gkePool("rdma", "a3-ultragpu-8g", "gib"),
		gkePool("plain", "a2-highgpu-8g", ""), gkePool("wrong-plugin", "a2-highgpu-8g", "tcpx"),
	}}
	cms := ncclConfigMaps(s)
	byName := map[string]corev1.ConfigMap{}
	for _, c := range cms {
		byName[c.Namespace+"/"+c.Name] = c
	}
	if len(cms) != 6 {
		t.Errorf("%d ConfigMaps, want 3 pools x 2 teams: %v", len(cms), byName)
	}
	got := byName["a/nccl-tcpx"].Data
	for k, want := range map[string]string{"NCCL_SOCKET_IFNAME": "=eth0", "NCCL_DEBUG": "WARN", "NCCL_GPUDIRECTTCPX_SOCKET_IFNAME": "eth1,eth2,eth3,eth4", "NCCL_GPUDIRECTTCPX_UNIX_CLIENT_PREFIX": "/run/tcpx"} {
		if got[k] != want {
			t.Errorf("tcpx %s = %q, want %q", k, got[k], want)
		}
	}
	if got := byName["b/nccl-tcpxo"].Data["NCCL_FASTRAK_IFNAME"]; got != "eth1,eth2,eth3,eth4,eth5,eth6,eth7,eth8" {
		t.Errorf("tcpxo NICs %q", got)
	}
	if got := byName["a/nccl-rdma"].Data["NCCL_NET"]; got != "gIB" {
		t.Errorf("rdma NCCL_NET %q", got)
	}
	if _, ok := byName["a/nccl-plain"]; ok {
		t.Error("a pool with no NCCL environment got a ConfigMap")
	}

	// GKE Network objects: a pair per GPU NIC of the TCPX (4) and TCPXO
	// (8) pools, deviceMode NetDevice; on the RDMA pool (A3 Ultra) one for
	// its extra gVNIC (NetDevice) and one per RDMA NIC (RDMA, one VPC
	// network); the pod annotation on their ConfigMaps attaches the GPU
	// NICs, and on the RDMA pool its RDMA NICs only (eth2..eth9).
	perPool := map[string]int{}
	modes := map[string][]string{}
	rdmaVPCs := map[string]bool{}
	for _, n := range gpuNICNetworks(s) {
		perPool[n.pool]++
		modes[n.pool] = append(modes[n.pool], string(n.params.Spec.DeviceMode))
		if n.net.Spec.ParametersRef == nil || n.net.Spec.ParametersRef.Name != n.params.Name || n.net.Spec.Type != "Device" || n.rdma != (n.pool == "rdma") {
			t.Errorf("pool %s: Network %+v, parameters %+v", n.pool, n.net.Spec, n.params.Spec)
		}
		if n.params.Spec.DeviceMode == "RDMA" {
			rdmaVPCs[n.params.Spec.VPC] = true
		}
	}
	if len(perPool) != 3 || perPool["tcpx"] != 4 || perPool["tcpxo"] != 8 || perPool["rdma"] != 9 {
		t.Errorf("GPU NIC objects per pool %v, want tcpx 4, tcpxo 8, rdma 9", perPool)
	}
	wantModes := map[string]string{"tcpx": strings.Repeat("NetDevice ", 4), "tcpxo": strings.Repeat("NetDevice ", 8), "rdma": "NetDevice " + strings.Repeat("RDMA ", 8)}
	for pool, want := range wantModes {
		if got := strings.Join(modes[pool], " ") + " "; got != want {
			t.Errorf("pool %s device modes %q, want %q", pool, got, want)
		}
	}
	if len(rdmaVPCs) != 1 {
		t.Errorf("RDMA NICs in VPC networks %v, want one", rdmaVPCs)
	}
	if a := byName["a/nccl-tcpxo"].Annotations[AnnotationPodInterfaces]; !strings.Contains(a, `{"interfaceName":"eth8","network":"tcpxo-gpunic-8"}`) {
		t.Errorf("tcpxo pod interfaces %q", a)
	}
	a := byName["a/nccl-rdma"].Annotations[AnnotationPodInterfaces]
	if !strings.HasPrefix(a, `[{"interfaceName":"eth0","network":"default"},{"interfaceName":"eth2","network":"rdma-rdma-0"},`) ||
		!strings.HasSuffix(a, `{"interfaceName":"eth9","network":"rdma-rdma-7"}]`) || strings.Contains(a, "gvnic") {
		t.Errorf("rdma pod interfaces %q", a)
	}

	dss := transportDaemonSets(s)
	want := map[string][]string{"nccl-tcpx-installer": {"tcpx"}, "nccl-tcpxo-installer": {"tcpxo"}, "nccl-rdma-installer": {"rdma"}, "device-injector": {"tcpx", "tcpxo"}}
	if len(dss) != len(want) {
		t.Errorf("%d DaemonSets, want %d", len(dss), len(want))
	}
	for _, d := range dss {
		pools, ok := want[d.Name]
		if !ok {
			t.Errorf("unexpected DaemonSet %s", d.Name)
			continue
		}
		sel := affinitySelects(d.Spec.Template.Spec.Affinity)
		for _, p := range s.NodePools {
			if sel(map[string]string{spec.LabelPool: p.Name}) != contains(pools, p.Name) {
				t.Errorf("%s selects pool %s: %v, want %v", d.Name, p.Name, !contains(pools, p.Name), contains(pools, p.Name))
			}
		}
		tols := d.Spec.Template.Spec.Tolerations
		if !tolerates(tols, gkeGPUTaint) {
			t.Errorf("%s does not tolerate GKE's GPU taint", d.Name)
		}
		if contains(pools, "tcpx") && !tolerates(tols, tcpx.Taints[0]) {
			t.Errorf("%s does not tolerate pool tcpx's taint", d.Name)
		}
		for _, c := range append(d.Spec.Template.Spec.InitContainers, d.Spec.Template.Spec.Containers...) {
			if c.Image == "" || (c.Image != ImageTCPXOPreInstall && !strings.Contains(c.Image, ":")) {
				t.Errorf("%s: container %s image %q not pinned", d.Name, c.Name, c.Image)
			}
		}
	}
	// EKS: the EFA pools and no GKE component.
	e := &spec.Spec{Provider: spec.ProviderEKS, NodePools: []spec.NodePool{
		{Name: "efa", MachineType: "p5.48xlarge", EFA: spec.EFA{Enabled: true}, Taints: []spec.Taint{{Key: "k", Effect: "NoSchedule"}}},
		{Name: "no-efa", MachineType: "p5.48xlarge"},
	}}
	if d := transportDaemonSets(e); len(d) != 0 {
		t.Errorf("EKS got GKE DaemonSets %v", d)
	}
	v := efaDevicePluginValues(efaPools(e))
	if len(v.SupportedInstanceLabels.Values) != 1 || v.SupportedInstanceLabels.Values[0] != "efa" || !tolerates(v.Tolerations, e.NodePools[0].Taints[0]) {
		t.Errorf("EFA device plugin values %+v", v)
	}
	if cm := ncclConfigMaps(e); len(cm) != 1 || cm[0].Namespace != "default" || cm[0].Data["FI_PROVIDER"] != "efa" {
		t.Errorf("EFA ConfigMaps %+v", cm)
	}
}

// TestPodSecurityFollowsTransport: TCPX/TCPXO/RDMA pools make the team
// namespaces privileged (the reason says which pool and why); EFA and no
// transport keep restricted.
func TestPodSecurityFollowsTransport(t *testing.T) {
	for _, c := range []struct {
		pool spec.NodePool
		want string
	}{
		{gkePool("tcpx", "a3-highgpu-8g", "tcpx"), "privileged"},
		{gkePool("tcpxo", "a3-megagpu-8g", "tcpxo"), "privileged"},
		{gkePool("rdma", "a3-ultragpu-8g", "gib"), "privileged"},
		{gkePool("plain", "a2-highgpu-8g", ""), "restricted"},
	} {
		level, reason := podSecurityLevel(&spec.Spec{Provider: spec.ProviderGKE, NodePools: []spec.NodePool{c.pool}}, spec.Team{Name: "t"})
		if level != c.want || (level == "privileged" && !strings.Contains(reason, "pool "+c.pool.Name)) {
			t.Errorf("%s: %s (%s), want %s", c.pool.Name, level, reason, c.want)
		}
	}
	level, _ := podSecurityLevel(&spec.Spec{Provider: spec.ProviderEKS, NodePools: []spec.NodePool{{Name: "efa", MachineType: "p5.48xlarge", EFA: spec.EFA{Enabled: true}}}}, spec.Team{Name: "t"})
	if level != "restricted" {
		t.Errorf("EFA: %s", level)
	}
}

// TestTeamPoolsScopeTeamManifests: a team limited to some pools
// (spec.teams[].pools) gets the Pod Security level of those pools only
// (an inference team off the GPUDirect-TCPX pool stays restricted, with the
// reason), LocalQueues onto ClusterQueues that hold only its pools'
// flavors and admit only its namespace beside the others that may use
// them, a GPU quota of its pools only (0 for names only other pools
// advertise), and NCCL ConfigMaps and NetworkPolicies of its pools only;
// a team without pools keeps every pool. No pool's quota sits in two
// ClusterQueues, and no workload of a team is admissible onto a flavor of a
// pool it may not use.
func TestTeamPoolsScopeTeamManifests(t *testing.T) {
	tcpx := gkePool("train", "a3-highgpu-8g", "tcpx")
	tcpx2 := gkePool("train2", "a3-highgpu-8g", "")
	l4 := gkePool("infer", "g2-standard-24", "")
	l4.Role, l4.GPU = spec.RoleInference, spec.GPU{Count: 2, Sharing: spec.Sharing{Strategy: spec.SharingTimeSlicing, Replicas: 4}}
	l4.NCCL.Env = map[string]string{"NCCL_DEBUG": "WARN"}
	cs := &spec.ClusterSpec{Metadata: spec.Metadata{Name: "c"}, Spec: spec.Spec{
		Provider: spec.ProviderGKE, Addons: spec.Addons{DevicePlugin: spec.DevicePlugin{Provider: spec.DevicePluginGKEManaged}},
		Teams: []spec.Team{
			{Name: "research"},
			{Name: "serving", Pools: []string{"infer"}},
			{Name: "tuning", Pools: []string{"train2", "infer"}},
		},
		NodePools: []spec.NodePool{tcpx, tcpx2, l4},
	}}
	m, err := buildManifests(cs)
	if err != nil {
		t.Fatal(err)
	}
	levels := map[string]string{}
	for _, n := range m.namespaces {
		levels[n.Name] = n.Labels["pod-security.kubernetes.io/enforce"]
	}
	if levels["research"] != "privileged" || levels["serving"] != "restricted" || levels["tuning"] != "restricted" {
		t.Errorf("levels %v, want research privileged, serving and tuning restricted", levels)
	}
	if r := m.podSecurity["serving"]; !strings.Contains(r, "team's pools (infer)") || !strings.Contains(r, "train, whose transport needs privileged, is not among them") {
		t.Errorf("serving's reason %q", r)
	}
	// Each pool's flavor is in exactly one ClusterQueue.
	inQueues := map[string][]string{}
	for _, q := range m.queues {
		for _, g := range q.Spec.ResourceGroups {
			for _, f := range g.Flavors {
				if f.Name != CPUMemoryFlavor {
					inQueues[f.Name] = append(inQueues[f.Name], q.Name)
				}
			}
		}
	}
	for _, pool := range []string{"train", "train2", "infer"} {
		if len(inQueues[pool]) != 1 {
			t.Errorf("pool %s's flavor in ClusterQueues %v, want one", pool, inQueues[pool])
		}
	}
	// Whole GPUs split: train (research only) and train2 (research and
	// tuning); the queue of train admits research only.
	lqs := map[string][]string{}
	for _, l := range m.local {
		lqs[l.Namespace] = append(lqs[l.Namespace], l.Name+"->"+l.Spec.ClusterQueue)
	}
	want := map[string]string{
		"research": "gpu-train->c-train gpu-train2->c-train2 gpu-time-slicing->c-time-slicing",
		"serving":  "gpu-time-slicing->c-time-slicing",
		"tuning":   "gpu-train2->c-train2 gpu-time-slicing->c-time-slicing",
	}
	for ns, w := range want {
		if got := strings.Join(lqs[ns], " "); got != w {
			t.Errorf("%s's LocalQueues %q, want %q", ns, got, w)
		}
	}
	for _, q := range m.queues {
		e := q.Spec.NamespaceSelector.MatchExpressions[0]
		got := string(e.Operator) + " " + strings.Join(e.Values, ",")
		w := map[string]string{"c-train": "In research", "c-train2": "In research,tuning", "c-time-slicing": "Exists "}[q.Name]
		if got != w {
			t.Errorf("ClusterQueue %s admits from %s %q, want %q", q.Name, e.Key, got, w)
		}
	}
	// Admission: no team reaches a flavor of a pool it may not use.
	for _, team := range cs.Spec.Teams {
		for _, l := range m.local {
			if l.Namespace != team.Name {
				continue
			}
			for _, f := range admissibleFlavors(m, team.Name, l.Name, map[corev1.ResourceName]int64{ResourceGPU: 1}, ResourceGPU) {
				if !team.Uses(f) {
					t.Errorf("team %s: LocalQueue %s admits onto flavor %s", team.Name, l.Name, f)
				}
			}
		}
	}
	// A LocalQueue serving writes itself onto the whole-GPU queue of
	// train: the ClusterQueue's namespaceSelector refuses it.
	m.local = append(m.local, LocalQueue{ObjectMeta: metav1.ObjectMeta{Name: "mine", Namespace: "serving"}, Spec: LocalQueueSpec{ClusterQueue: "c-train"}})
	if got := admissibleFlavors(m, "serving", "mine", map[corev1.ResourceName]int64{ResourceGPU: 1}, ResourceGPU); len(got) != 0 {
		t.Errorf("serving's own LocalQueue onto c-train admits onto %v", got)
	}
	if got := admissibleFlavors(m, "research", "gpu-train", map[corev1.ResourceName]int64{ResourceGPU: 1}, ResourceGPU); len(got) != 1 || got[0] != "train" {
		t.Errorf("research on gpu-train: %v, want [train]", got)
	}
	// Quota: serving's time-slices only, 0 whole GPUs.
	for _, q := range m.quotas {
		g := q.Spec.Hard["requests."+ResourceGPU]
		w := map[string]int64{"research": 16 + 16 + 16, "serving": 16, "tuning": 16 + 16}[q.Namespace]
		if g.Value() != w {
			t.Errorf("%s: requests.%s %s, want %d", q.Namespace, ResourceGPU, g.String(), w)
		}
	}
	// NCCL ConfigMaps and NetworkPolicies of the team's pools only.
	for _, c := range m.configMaps {
		if !slices.ContainsFunc(cs.Spec.Teams, func(t spec.Team) bool { return t.Name == c.Namespace && t.Uses(c.Labels[spec.LabelPool]) }) {
			t.Errorf("ConfigMap %s/%s: pool %s is not the team's", c.Namespace, c.Name, c.Labels[spec.LabelPool])
		}
	}
	var nccl []string
	for _, p := range m.policies {
		if strings.HasPrefix(p.Name, "allow-nccl-") {
			nccl = append(nccl, p.Namespace+"/"+p.Name)
		}
	}
	if got := strings.Join(nccl, " "); got != "research/allow-nccl-train research/allow-nccl-train2 tuning/allow-nccl-train2" {
		t.Errorf("NCCL policies %q", got)
	}
}
