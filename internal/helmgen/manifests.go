package helmgen

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/gpuctl/gpuctl/internal/spec"
)

// Kueue objects, as small typed structs of kueue.x-k8s.io/v1beta2 (Kueue
// 0.19): the upstream API package pulls in controller-runtime and a client
// stack that nothing else in gpuctl needs. Field names follow
// https://github.com/kubernetes-sigs/kueue/tree/main/apis/kueue/v1beta2.

// KueueAPIVersion is the Kueue API gpuctl writes.
const KueueAPIVersion = "kueue.x-k8s.io/v1beta2"

// ResourceFlavor is a Kueue ResourceFlavor: the nodes of one pool.
type ResourceFlavor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ResourceFlavorSpec `json:"spec"`
}

// ResourceFlavorSpec selects the pool's nodes; Kueue adds NodeLabels as a
// node selector and Tolerations to the pods it admits on this flavor.
type ResourceFlavorSpec struct {
	NodeLabels  map[string]string   `json:"nodeLabels,omitempty"`
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// ClusterQueue is a Kueue ClusterQueue.
type ClusterQueue struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ClusterQueueSpec `json:"spec"`
}

// ClusterQueueSpec holds the quotas.
type ClusterQueueSpec struct {
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector"`
	QueueingStrategy  string                `json:"queueingStrategy,omitempty"`
	ResourceGroups    []ResourceGroup       `json:"resourceGroups"`
}

// ResourceGroup is resources that are quota'd together over flavors.
type ResourceGroup struct {
	CoveredResources []corev1.ResourceName `json:"coveredResources"`
	Flavors          []FlavorQuotas        `json:"flavors"`
}

// FlavorQuotas are the quotas of one flavor.
type FlavorQuotas struct {
	Name      string          `json:"name"`
	Resources []ResourceQuota `json:"resources"`
}

// ResourceQuota is the nominal quota of one resource.
type ResourceQuota struct {
	Name         corev1.ResourceName `json:"name"`
	NominalQuota resource.Quantity   `json:"nominalQuota"`
}

// LocalQueue is a Kueue LocalQueue in a team namespace.
type LocalQueue struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              LocalQueueSpec `json:"spec"`
}

// LocalQueueSpec points at the ClusterQueue.
type LocalQueueSpec struct {
	ClusterQueue string `json:"clusterQueue"`
}

// Names and labels of the generated objects.
const (
	// LocalQueueName is the LocalQueue of every team namespace; workloads
	// set kueue.x-k8s.io/queue-name: gpu.
	LocalQueueName = "gpu"
	// LabelTeam marks the team namespaces the ClusterQueue admits from.
	LabelTeam = "gpuctl.dev/team"
	// CPUMemoryFlavor covers CPU and memory, which gpuctl does not cap but
	// Kueue must see covered to admit pods that request them.
	CPUMemoryFlavor = "gpuctl-cpu-memory"
)

// cpuMemoryCeiling is the quota of the CPU/memory flavor: far above any
// cluster, so that only GPUs are rationed.
var cpuMemoryCeiling = map[corev1.ResourceName]string{corev1.ResourceCPU: "1000000", corev1.ResourceMemory: "1Pi"}

// manifests are the in-cluster objects of one environment, in file order.
type manifests struct {
	flavors    []ResourceFlavor
	queue      ClusterQueue
	local      []LocalQueue
	namespaces []corev1.Namespace
	quotas     []corev1.ResourceQuota
	policies   []networkingv1.NetworkPolicy
}

// PoolQuota is the GPU capacity of one pool as Kueue sees it.
type PoolQuota struct {
	Pool       string
	Advertised Advertised
	// Nodes is the pool's maximum node count.
	Nodes int
}

// Total is the pool's advertised devices at its maximum size.
func (q PoolQuota) Total() int { return q.Nodes * q.Advertised.PerNode }

// objectName turns a pool name into a Kubernetes object name (a DNS label):
// EKS allows upper-case letters and '_' in node group names, Kubernetes
// object names do not.
func objectName(pool string) string {
	return strings.ReplaceAll(strings.ToLower(pool), "_", "-")
}

func poolQuotas(s *spec.Spec) ([]PoolQuota, error) {
	var out []PoolQuota
	seen := map[string]string{}
	for i := range s.NodePools {
		name := objectName(s.NodePools[i].Name)
		if other, dup := seen[name]; dup {
			return nil, fmt.Errorf("pools %q and %q map to the same Kubernetes name %q; rename one", other, s.NodePools[i].Name, name)
		}
		seen[name] = s.NodePools[i].Name
		p := &s.NodePools[i]
		a, err := AdvertisedBy(s, p)
		if err != nil {
			return nil, err
		}
		if a.Resource == "" {
			continue
		}
		if _, ok := mulQuota(p.Autoscaling.Max, a.PerNode); !ok {
			return nil, fmt.Errorf("pool %s: %d nodes times %d %s per node overflows a quota", p.Name, p.Autoscaling.Max, a.PerNode, a.Resource)
		}
		out = append(out, PoolQuota{Pool: p.Name, Advertised: a, Nodes: p.Autoscaling.Max})
	}
	return out, nil
}

func buildManifests(cs *spec.ClusterSpec) (*manifests, error) {
	s := &cs.Spec
	quotas, err := poolQuotas(s)
	if err != nil {
		return nil, err
	}
	m := &manifests{}
	cq := ClusterQueue{
		TypeMeta:   metav1.TypeMeta{APIVersion: KueueAPIVersion, Kind: "ClusterQueue"},
		ObjectMeta: metav1.ObjectMeta{Name: cs.Metadata.Name},
		Spec: ClusterQueueSpec{
			NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: LabelTeam, Operator: metav1.LabelSelectorOpExists}}},
			QueueingStrategy:  "BestEffortFIFO",
		},
	}
	// One resource group per advertised resource name, in order of first use.
	groups := map[string]int{}
	totals := map[string]int{}
	byName := poolIndex(s, func(p *spec.NodePool) string { return p.Name })
	for _, q := range quotas {
		p := &s.NodePools[byName[q.Pool]]
		m.flavors = append(m.flavors, ResourceFlavor{
			TypeMeta:   metav1.TypeMeta{APIVersion: KueueAPIVersion, Kind: "ResourceFlavor"},
			ObjectMeta: metav1.ObjectMeta{Name: objectName(q.Pool)},
			Spec: ResourceFlavorSpec{
				NodeLabels:  map[string]string{spec.LabelPool: q.Pool},
				Tolerations: tolerationsFor([]spec.NodePool{*p}, false),
			},
		})
		res := q.Advertised.Resource
		gi, ok := groups[res]
		if !ok {
			gi = len(cq.Spec.ResourceGroups)
			groups[res] = gi
			cq.Spec.ResourceGroups = append(cq.Spec.ResourceGroups, ResourceGroup{CoveredResources: []corev1.ResourceName{corev1.ResourceName(res)}})
		}
		cq.Spec.ResourceGroups[gi].Flavors = append(cq.Spec.ResourceGroups[gi].Flavors, FlavorQuotas{
			Name:      objectName(q.Pool),
			Resources: []ResourceQuota{{Name: corev1.ResourceName(res), NominalQuota: *resource.NewQuantity(int64(q.Total()), resource.DecimalSI)}},
		})
		if totals[res] += q.Total(); totals[res] > maxQuota {
			return nil, fmt.Errorf("the pools' %s add up to more than %d, which no quota holds", res, maxQuota)
		}
	}
	if len(quotas) > 0 {
		m.flavors = append(m.flavors, ResourceFlavor{
			TypeMeta:   metav1.TypeMeta{APIVersion: KueueAPIVersion, Kind: "ResourceFlavor"},
			ObjectMeta: metav1.ObjectMeta{Name: CPUMemoryFlavor},
		})
		fq := FlavorQuotas{Name: CPUMemoryFlavor}
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			fq.Resources = append(fq.Resources, ResourceQuota{Name: r, NominalQuota: resource.MustParse(cpuMemoryCeiling[r])})
		}
		cq.Spec.ResourceGroups = append(cq.Spec.ResourceGroups, ResourceGroup{
			CoveredResources: []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory},
			Flavors:          []FlavorQuotas{fq},
		})
	}
	m.queue = cq

	for _, t := range s.TeamsOrDefault() {
		ns := t.Name
		m.namespaces = append(m.namespaces, corev1.Namespace{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{
				"pod-security.kubernetes.io/enforce": "restricted",
				"pod-security.kubernetes.io/warn":    "restricted",
				LabelTeam:                            t.Name,
			}},
		})
		if len(quotas) > 0 {
			m.local = append(m.local, LocalQueue{
				TypeMeta:   metav1.TypeMeta{APIVersion: KueueAPIVersion, Kind: "LocalQueue"},
				ObjectMeta: metav1.ObjectMeta{Name: LocalQueueName, Namespace: ns},
				Spec:       LocalQueueSpec{ClusterQueue: cq.Name},
			})
			hard := corev1.ResourceList{}
			for _, res := range slices.Sorted(maps.Keys(totals)) {
				n := totals[res]
				if t.GPUQuota > 0 && t.GPUQuota < n {
					n = t.GPUQuota
				}
				hard[corev1.ResourceName("requests."+res)] = *resource.NewQuantity(int64(n), resource.DecimalSI)
			}
			m.quotas = append(m.quotas, corev1.ResourceQuota{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
				ObjectMeta: metav1.ObjectMeta{Name: "gpu", Namespace: ns},
				Spec:       corev1.ResourceQuotaSpec{Hard: hard},
			})
		}
		m.policies = append(m.policies, networkPolicies(s, ns)...)
	}
	return m, nil
}

// poolIndex maps key(pool) to the index of the first pool with that key:
// a lookup per pool, not a walk over every pool.
func poolIndex(s *spec.Spec, key func(*spec.NodePool) string) map[string]int {
	m := make(map[string]int, len(s.NodePools))
	for i := range s.NodePools {
		if k := key(&s.NodePools[i]); k != "" {
			if _, dup := m[k]; !dup {
				m[k] = i
			}
		}
	}
	return m
}

// networkPolicies are a team namespace's policies: deny all traffic, allow
// DNS, and let the pods of each training pool reach each other on every
// port (NCCL bootstraps over TCP and picks its ports at run time). Training
// pods carry the label gpuctl.dev/pool: <pool> to be covered.
func networkPolicies(s *spec.Spec, ns string) []networkingv1.NetworkPolicy {
	tm := metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"}
	both := []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}
	udp, tcp := corev1.ProtocolUDP, corev1.ProtocolTCP
	dns := intstr.FromInt32(53)
	out := []networkingv1.NetworkPolicy{
		{TypeMeta: tm, ObjectMeta: metav1.ObjectMeta{Name: "default-deny", Namespace: ns},
			Spec: networkingv1.NetworkPolicySpec{PolicyTypes: both}},
		{TypeMeta: tm, ObjectMeta: metav1.ObjectMeta{Name: "allow-dns", Namespace: ns},
			Spec: networkingv1.NetworkPolicySpec{
				PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
				Egress: []networkingv1.NetworkPolicyEgressRule{{
					To: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "kube-system"}}}},
					Ports: []networkingv1.NetworkPolicyPort{
						{Protocol: &udp, Port: &dns},
						{Protocol: &tcp, Port: &dns},
					},
				}},
			}},
	}
	var training []string
	for _, p := range s.NodePools {
		if p.Role == spec.RoleTraining {
			training = append(training, p.Name)
		}
	}
	sort.Strings(training)
	for _, pool := range training {
		sel := metav1.LabelSelector{MatchLabels: map[string]string{spec.LabelPool: pool}}
		peer := []networkingv1.NetworkPolicyPeer{{PodSelector: &sel}}
		out = append(out, networkingv1.NetworkPolicy{
			TypeMeta:   tm,
			ObjectMeta: metav1.ObjectMeta{Name: "allow-nccl-" + objectName(pool), Namespace: ns},
			Spec: networkingv1.NetworkPolicySpec{
				PodSelector: sel,
				PolicyTypes: both,
				Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: peer}},
				Egress:      []networkingv1.NetworkPolicyEgressRule{{To: peer}},
			},
		})
	}
	return out
}
