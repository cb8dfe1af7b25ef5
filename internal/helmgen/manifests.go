package helmgen

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/gpuctl/gpuctl/internal/matrix"
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

// ClusterQueueSpec holds the quotas, and the admission checks that run on
// some of its flavors.
type ClusterQueueSpec struct {
	NamespaceSelector       *metav1.LabelSelector    `json:"namespaceSelector"`
	QueueingStrategy        string                   `json:"queueingStrategy,omitempty"`
	ResourceGroups          []ResourceGroup          `json:"resourceGroups"`
	AdmissionChecksStrategy *AdmissionChecksStrategy `json:"admissionChecksStrategy,omitempty"`
}

// AdmissionChecksStrategy says which admission checks run for which of
// the ClusterQueue's flavors.
type AdmissionChecksStrategy struct {
	AdmissionChecks []AdmissionCheckStrategyRule `json:"admissionChecks"`
}

// AdmissionCheckStrategyRule runs the AdmissionCheck Name for workloads
// assigned one of OnFlavors.
type AdmissionCheckStrategyRule struct {
	Name      string   `json:"name"`
	OnFlavors []string `json:"onFlavors"`
}

// AdmissionCheck is a Kueue AdmissionCheck: a controller that must say yes
// before a workload is admitted.
type AdmissionCheck struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              AdmissionCheckSpec `json:"spec"`
}

// AdmissionCheckSpec names the check's controller and its parameters.
type AdmissionCheckSpec struct {
	ControllerName string                       `json:"controllerName"`
	Parameters     *AdmissionCheckParametersRef `json:"parameters,omitempty"`
}

// AdmissionCheckParametersRef points at the check's parameters object.
type AdmissionCheckParametersRef struct {
	APIGroup string `json:"apiGroup"`
	Kind     string `json:"kind"`
	Name     string `json:"name"`
}

// ProvisioningRequestConfig is the Kueue ProvisioningRequestConfig of a
// ProvisioningRequest admission check: the provisioning class the
// ProvisioningRequests it creates ask for, and the resources they cover.
type ProvisioningRequestConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ProvisioningRequestConfigSpec `json:"spec"`
}

// ProvisioningRequestConfigSpec is the class and the managed resources.
type ProvisioningRequestConfigSpec struct {
	ProvisioningClassName string                `json:"provisioningClassName"`
	ManagedResources      []corev1.ResourceName `json:"managedResources,omitempty"`
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

// GKE queued provisioning through Kueue: the ProvisioningRequest admission
// check (controller kueue.x-k8s.io/provisioning-request) with a
// ProvisioningRequestConfig of class queued-provisioning.gke.io managing
// nvidia.com/gpu, run on the flavors of the queued pools.
// Sources: https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest,
// https://kueue.sigs.k8s.io/docs/admission-check-controllers/provisioning/ and
// cluster-toolkit examples/gke-consumption-options/dws-flex-start-queued-provisioning/dws-queues.yaml.tftpl
// at 1047080375afbb44da4b596be314634e7486af4a (2026-12-03).
const (
	// QueuedProvisioningCheck names the AdmissionCheck and its
	// ProvisioningRequestConfig.
	QueuedProvisioningCheck = "gpuctl-queued-provisioning"
	// ProvisioningRequestController is the controller of Kueue's
	// ProvisioningRequest admission check.
	ProvisioningRequestController = "kueue.x-k8s.io/provisioning-request"
	// GKEQueuedProvisioningClass is the ProvisioningRequest class of GKE's
	// queued provisioning.
	GKEQueuedProvisioningClass = "queued-provisioning.gke.io"
)

// manifests are the in-cluster objects of one environment, in file order.
type manifests struct {
	// provisioning are the ProvisioningRequestConfig and AdmissionCheck of
	// queued provisioning, first in kueue.yaml; none without a queued pool
	// in a ClusterQueue.
	provisioning []any
	flavors      []ResourceFlavor
	// queues are the ClusterQueues, whole GPUs first, then one per sharing
	// mode whose devices are advertised as nvidia.com/gpu (QueueMode).
	queues     []ClusterQueue
	local      []LocalQueue
	namespaces []corev1.Namespace
	quotas     []corev1.ResourceQuota
	policies   []networkingv1.NetworkPolicy
	// podSecurity says, by team namespace, why it enforces the Pod
	// Security level it does (a comment in teams.yaml).
	podSecurity map[string]string
	// quotaReasons say, by team namespace, where one resource name
	// carries whole GPUs and shares, how its ResourceQuota counts it (a
	// comment; "" where no name does).
	quotaReasons   map[string]string
	configMaps     []corev1.ConfigMap
	gpuNICNetworks []gpuNICNetwork
	daemonSets     []appsv1.DaemonSet
	// workloads are the GPUDirect pools' workload sides (workload.go).
	workloads []poolWorkload
	// acceptance are acceptance.yaml's objects (buildAcceptance); none
	// without spec.acceptance.
	acceptance []any
	// preflight are the preflight snippets of spec.acceptance.preflight's
	// pools (preflight.go).
	preflight []preflightPool
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

// ResourceEFA is the extended resource the EFA device plugin advertises.
const ResourceEFA = "vpc.amazonaws.com/efa"

// QueueMode is the sharing mode of the devices a pool advertises as
// nvidia.com/gpu, which decides its ClusterQueue: "" for whole GPUs (and for
// shared or MIG devices that have a resource name of their own,
// nvidia.com/gpu.shared or nvidia.com/mig-<profile>), else time-slicing,
// mps or mig-<profile>. Kueue assigns a workload any flavor of the resource
// group that covers what it requests, so shares and slices that the device
// plugin advertises as nvidia.com/gpu must not sit in the group of whole
// GPUs: they get a ClusterQueue of their own.
// Source: https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/#resource-groups
func QueueMode(s *spec.Spec, p *spec.NodePool, a Advertised) string {
	if a.Resource != ResourceGPU {
		return ""
	}
	switch p.SharingStrategy() {
	case spec.SharingTimeSlicing, spec.SharingMPS:
		if s.DevicePluginFor(p) == spec.DevicePluginBottlerocket {
			return "" // gpuctl configures no sharing there: whole GPUs
		}
		return p.SharingStrategy()
	case spec.SharingMIG:
		return "mig-" + p.GPU.Sharing.MIGProfile
	}
	return ""
}

// QueueNames are the ClusterQueue and the teams' LocalQueue of a sharing
// mode (QueueMode): the spec's name and "gpu" for whole GPUs, each with
// "-<mode>" appended otherwise.
func QueueNames(specName, mode string) (clusterQueue, localQueue string) {
	if mode == "" {
		return specName, LocalQueueName
	}
	return specName + "-" + mode, LocalQueueName + "-" + mode
}

// kueueQueue is one ClusterQueue being built: its sharing mode, the teams
// whose namespaces it admits from (nil: every team namespace), and the
// index of each covered GPU resource name's group.
type kueueQueue struct {
	mode   string
	teams  []string
	cq     ClusterQueue
	lq     string
	groups map[string]int
}

func buildManifests(cs *spec.ClusterSpec) (*manifests, error) {
	s := &cs.Spec
	quotas, err := poolQuotas(s)
	if err != nil {
		return nil, err
	}
	pq, err := queuePools(s, quotas)
	if err != nil {
		return nil, err
	}
	queues, queueOf, err := kueueQueues(cs.Metadata.Name, quotas, pq.modes, pq.users)
	if err != nil {
		return nil, err
	}
	m := &manifests{}
	poolTotals, err := m.addFlavors(s, quotas, pq, queueOf)
	if err != nil {
		return nil, err
	}
	m.addCPUMemory(queues)
	m.addQueuedProvisioning(pq, queueOf)
	for _, qu := range queues {
		m.queues = append(m.queues, qu.cq)
	}
	m.podSecurity = map[string]string{}
	m.quotaReasons = map[string]string{}
	for _, t := range s.Teams {
		m.addTeam(s, t, len(quotas) > 0, queues, poolTotals)
	}
	m.configMaps = ncclConfigMaps(s)
	m.gpuNICNetworks = gpuNICNetworks(s)
	m.daemonSets = transportDaemonSets(s)
	if m.workloads, err = workloadPods(s); err != nil {
		return nil, err
	}
	if m.preflight, err = preflightPools(s); err != nil {
		return nil, err
	}
	if m.acceptance, err = buildAcceptance(s); err != nil {
		return nil, err
	}
	return m, nil
}

// addQueuedProvisioning runs the ProvisioningRequest admission check on
// the flavors of the queued provisioning pools (capacity: queued), in each
// ClusterQueue that holds one, and adds the check and its config once.
func (m *manifests) addQueuedProvisioning(pq queuePlan, queueOf []*kueueQueue) {
	for i, p := range pq.pools {
		qu := queueOf[i]
		if p.Capacity != spec.CapacityQueued || qu == nil {
			continue
		}
		st := qu.cq.Spec.AdmissionChecksStrategy
		if st == nil {
			st = &AdmissionChecksStrategy{AdmissionChecks: []AdmissionCheckStrategyRule{{Name: QueuedProvisioningCheck}}}
			qu.cq.Spec.AdmissionChecksStrategy = st
		}
		st.AdmissionChecks[0].OnFlavors = append(st.AdmissionChecks[0].OnFlavors, objectName(p.Name))
	}
	if len(m.provisioning) > 0 || !slices.ContainsFunc(queueOf, func(qu *kueueQueue) bool { return qu != nil && qu.cq.Spec.AdmissionChecksStrategy != nil }) {
		return
	}
	kueueGroup := strings.TrimSuffix(KueueAPIVersion, "/v1beta2")
	m.provisioning = append(m.provisioning,
		ProvisioningRequestConfig{
			TypeMeta:   metav1.TypeMeta{APIVersion: KueueAPIVersion, Kind: "ProvisioningRequestConfig"},
			ObjectMeta: metav1.ObjectMeta{Name: QueuedProvisioningCheck},
			Spec:       ProvisioningRequestConfigSpec{ProvisioningClassName: GKEQueuedProvisioningClass, ManagedResources: []corev1.ResourceName{ResourceGPU}},
		},
		AdmissionCheck{
			TypeMeta:   metav1.TypeMeta{APIVersion: KueueAPIVersion, Kind: "AdmissionCheck"},
			ObjectMeta: metav1.ObjectMeta{Name: QueuedProvisioningCheck},
			Spec: AdmissionCheckSpec{ControllerName: ProvisioningRequestController,
				Parameters: &AdmissionCheckParametersRef{APIGroup: kueueGroup, Kind: "ProvisioningRequestConfig", Name: QueuedProvisioningCheck}},
		})
}

// queuePlan is, per pool quota (index of poolQuotas), what its queue and
// quotas depend on: its sharing mode (QueueMode), its EFA interfaces over
// all its nodes, and the teams that may use it (spec.teams[].pools; nil
// when every team may, empty when none does: the pool gets no flavor).
type queuePlan struct {
	modes []string
	efa   []int
	users [][]string
	pools []*spec.NodePool
}

// queuePools is the queuePlan of quotas.
func queuePools(s *spec.Spec, quotas []PoolQuota) (queuePlan, error) {
	teams := s.Teams
	byName := poolIndex(s, func(p *spec.NodePool) string { return p.Name })
	pq := queuePlan{modes: make([]string, len(quotas)), efa: make([]int, len(quotas)), users: make([][]string, len(quotas)), pools: make([]*spec.NodePool, len(quotas))}
	for i, q := range quotas {
		p := &s.NodePools[byName[q.Pool]]
		pq.pools[i] = p
		pq.modes[i] = QueueMode(s, p, q.Advertised)
		n, ok := matrix.PoolEFAInterfaces(s.Provider, p)
		if !ok {
			return queuePlan{}, fmt.Errorf("pool %s: number of EFA interfaces unknown; set efa.interfaces", p.Name)
		}
		pq.efa[i] = n * q.Nodes
		pq.users[i] = poolUsers(teams, q.Pool)
	}
	return pq, nil
}

// poolUsers are the teams (sorted) that may use pool, nil when every team
// may, empty (not nil) when none does.
func poolUsers(teams []spec.Team, pool string) []string {
	var us []string
	for _, t := range teams {
		if t.Uses(pool) {
			us = append(us, t.Name)
		}
	}
	if len(us) == len(teams) {
		return nil
	}
	if us == nil {
		return []string{}
	}
	return slices.Sorted(slices.Values(us))
}

// poolTotal is a pool's devices of one resource name and sharing mode:
// whole GPUs and the shares of a pool that advertises them under the same
// name (nvidia.com/gpu) are counted apart, for the team quotas.
type poolTotal struct {
	pool, res, mode string
	n               int
}

// addFlavors adds each pool's ResourceFlavor and its quota in its queue
// (queueOf, nil for a pool no team may use), and returns each pool's
// totals. The pools' total of one resource name must fit a quota.
func (m *manifests) addFlavors(s *spec.Spec, quotas []PoolQuota, pq queuePlan, queueOf []*kueueQueue) ([]poolTotal, error) {
	totals := map[string]int{}
	var poolTotals []poolTotal
	for i, q := range quotas {
		res := q.Advertised.Resource
		poolTotals = append(poolTotals, poolTotal{q.Pool, res, pq.modes[i], q.Total()})
		if totals[res] += q.Total(); totals[res] > maxQuota {
			return nil, fmt.Errorf("the pools' %s add up to more than %d, which no quota holds", res, maxQuota)
		}
		qu := queueOf[i]
		if qu == nil {
			continue // no team may use the pool
		}
		m.flavors = append(m.flavors, ResourceFlavor{
			TypeMeta:   metav1.TypeMeta{APIVersion: KueueAPIVersion, Kind: "ResourceFlavor"},
			ObjectMeta: metav1.ObjectMeta{Name: objectName(q.Pool)},
			Spec: ResourceFlavorSpec{
				NodeLabels:  map[string]string{spec.LabelPool: q.Pool},
				Tolerations: tolerationsFor([]spec.NodePool{*pq.pools[i]}, false),
			},
		})
		g := &qu.cq.Spec.ResourceGroups[qu.group(res, quotas, pq.efa, queueOf)]
		fq := FlavorQuotas{Name: objectName(q.Pool)}
		for _, r := range g.CoveredResources {
			n := q.Total()
			if r == ResourceEFA {
				n = pq.efa[i]
			}
			fq.Resources = append(fq.Resources, ResourceQuota{Name: r, NominalQuota: *resource.NewQuantity(int64(n), resource.DecimalSI)})
		}
		g.Flavors = append(g.Flavors, fq)
	}
	return poolTotals, nil
}

// group is the index of qu's resource group of GPU resource name res,
// added where qu has none yet. EFA pods request vpc.amazonaws.com/efa next
// to their GPUs; Kueue admits no workload that requests a resource its
// ClusterQueue does not cover, so the group covers it where one of its
// pools has EFA (quota 0 on the others).
func (qu *kueueQueue) group(res string, quotas []PoolQuota, efa []int, queueOf []*kueueQueue) int {
	if gi, ok := qu.groups[res]; ok {
		return gi
	}
	gi := len(qu.cq.Spec.ResourceGroups)
	qu.groups[res] = gi
	covered := []corev1.ResourceName{corev1.ResourceName(res)}
	for j, o := range quotas {
		if queueOf[j] == qu && o.Advertised.Resource == res && efa[j] > 0 {
			covered = append(covered, ResourceEFA)
			break
		}
	}
	qu.cq.Spec.ResourceGroups = append(qu.cq.Spec.ResourceGroups, ResourceGroup{CoveredResources: covered})
	return gi
}

// addCPUMemory adds the CPU and memory flavor and its group to every queue
// (none without queues).
func (m *manifests) addCPUMemory(queues []*kueueQueue) {
	if len(queues) == 0 {
		return
	}
	m.flavors = append(m.flavors, ResourceFlavor{
		TypeMeta:   metav1.TypeMeta{APIVersion: KueueAPIVersion, Kind: "ResourceFlavor"},
		ObjectMeta: metav1.ObjectMeta{Name: CPUMemoryFlavor},
	})
	for _, qu := range queues {
		fq := FlavorQuotas{Name: CPUMemoryFlavor}
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			fq.Resources = append(fq.Resources, ResourceQuota{Name: r, NominalQuota: resource.MustParse(cpuMemoryCeiling[r])})
		}
		qu.cq.Spec.ResourceGroups = append(qu.cq.Spec.ResourceGroups, ResourceGroup{
			CoveredResources: []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory},
			Flavors:          []FlavorQuotas{fq},
		})
	}
}

// addTeam adds team t's namespace with its pod security level, its network
// policies and, where the pools advertise GPUs (gpus), its LocalQueues and
// its GPU ResourceQuota.
func (m *manifests) addTeam(s *spec.Spec, t spec.Team, gpus bool, queues []*kueueQueue, poolTotals []poolTotal) {
	ns := t.Name
	level, reason := podSecurityLevel(s, t)
	m.podSecurity[ns] = reason
	m.namespaces = append(m.namespaces, corev1.Namespace{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{
			"pod-security.kubernetes.io/enforce": level,
			"pod-security.kubernetes.io/warn":    level,
			LabelTeam:                            t.Name,
		}},
	})
	if gpus {
		m.addLocalQueues(t, queues)
		m.addTeamQuota(t, poolTotals)
	}
	m.policies = append(m.policies, networkPolicies(s, t)...)
}

// addLocalQueues adds team t's LocalQueue of every queue that admits it.
func (m *manifests) addLocalQueues(t spec.Team, queues []*kueueQueue) {
	for _, qu := range queues {
		if qu.teams != nil && !slices.Contains(qu.teams, t.Name) {
			continue
		}
		m.local = append(m.local, LocalQueue{
			TypeMeta:   metav1.TypeMeta{APIVersion: KueueAPIVersion, Kind: "LocalQueue"},
			ObjectMeta: metav1.ObjectMeta{Name: qu.lq, Namespace: t.Name},
			Spec:       LocalQueueSpec{ClusterQueue: qu.cq.Name},
		})
	}
}

// addTeamQuota adds team t's GPU ResourceQuota: its devices per resource
// name and mode, of its pools only; every name the spec's pools advertise
// is listed, at 0 where none of its pools advertises it (a ResourceQuota
// leaves a name it does not list unlimited).
func (m *manifests) addTeamQuota(t spec.Team, poolTotals []poolTotal) {
	byMode := map[string]map[string]int{}
	for _, pt := range poolTotals {
		if byMode[pt.res] == nil {
			byMode[pt.res] = map[string]int{}
		}
		if t.Uses(pt.pool) {
			byMode[pt.res][pt.mode] += pt.n
		}
	}
	hard, shared := teamQuota(byMode, t.GPUQuota)
	m.quotas = append(m.quotas, corev1.ResourceQuota{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
		ObjectMeta: metav1.ObjectMeta{Name: "gpu", Namespace: t.Name},
		Spec:       corev1.ResourceQuotaSpec{Hard: hard},
	})
	m.quotaReasons[t.Name] = shared
}

// kueueQueues lays the GPU pools out over ClusterQueues: one per sharing
// mode (QueueMode; whole GPUs first, then in order of first use), and
// within a mode one per set of teams that may use the pools
// (spec.teams[].pools), so that a team's LocalQueue reaches only its own
// pools' flavors and every flavor's quota sits in one ClusterQueue (two
// queues holding the same pool's quota would admit twice its devices).
// A mode whose pools every team may use keeps one ClusterQueue named
// QueueNames and admitting from every team namespace (gpuctl.dev/team
// Exists); a queue of some teams admits from those (gpuctl.dev/team In).
// Where a mode's pools split into several team sets, the queue of every
// team keeps QueueNames, the others take "-<first pool>" after both names.
// queueOf[i] is pool i's queue, nil where no team may use it (users[i]
// empty, not nil). The whole-GPU queue exists whenever a pool advertises
// GPUs, so every team has its LocalQueue gpu.
func kueueQueues(specName string, quotas []PoolQuota, modes []string, users [][]string) ([]*kueueQueue, []*kueueQueue, error) {
	queueOf := make([]*kueueQueue, len(quotas))
	if len(quotas) == 0 {
		return nil, queueOf, nil
	}
	qp := splitQueues(quotas, modes, users)
	var out []*kueueQueue
	built := map[*queuePart]*kueueQueue{}
	for _, mode := range qp.modeOrder {
		for _, p := range qp.parts {
			if p.mode != mode {
				continue
			}
			qu, err := newKueueQueue(specName, p, qp.perMode[mode] > 1)
			if err != nil {
				return nil, nil, err
			}
			built[p] = qu
			out = append(out, qu)
		}
	}
	names := map[string]bool{}
	for _, qu := range out {
		if names[qu.cq.Name] {
			return nil, nil, fmt.Errorf("two ClusterQueues would be named %q (a pool's name repeats a sharing mode's); rename the pool", qu.cq.Name)
		}
		names[qu.cq.Name] = true
	}
	for i := range quotas {
		if users[i] != nil && len(users[i]) == 0 {
			continue
		}
		queueOf[i] = built[qp.byKey[modes[i]+"\x00"+teamsKey(users[i])]]
	}
	return out, queueOf, nil
}

// queuePart is one ClusterQueue to be: a sharing mode, the teams it admits
// from (nil: every team) and its first pool.
type queuePart struct {
	mode  string
	teams []string
	first string
}

// queueParts are the ClusterQueues of the pools: parts in order of first
// use, keyed by mode and teams (byKey), the number of parts of each mode,
// and the modes in queue order (whole GPUs first, then in order of first
// use).
type queueParts struct {
	parts     []*queuePart
	byKey     map[string]*queuePart
	perMode   map[string]int
	modeOrder []string
}

// teamsKey is the key of a set of teams, "*" for every team.
func teamsKey(us []string) string {
	if us == nil {
		return "*"
	}
	return strings.Join(us, ",")
}

// splitQueues groups the pools that some team may use by mode and teams;
// the whole-GPU part exists even where no pool needs it.
func splitQueues(quotas []PoolQuota, modes []string, users [][]string) queueParts {
	qp := queueParts{byKey: map[string]*queuePart{}, perMode: map[string]int{}}
	for i, q := range quotas {
		if users[i] != nil && len(users[i]) == 0 {
			continue
		}
		k := modes[i] + "\x00" + teamsKey(users[i])
		if qp.byKey[k] != nil {
			continue
		}
		p := &queuePart{mode: modes[i], teams: users[i], first: q.Pool}
		qp.byKey[k] = p
		qp.parts = append(qp.parts, p)
		if qp.perMode[modes[i]] == 0 {
			qp.modeOrder = append(qp.modeOrder, modes[i])
		}
		qp.perMode[modes[i]]++
	}
	if qp.perMode[""] == 0 {
		p := &queuePart{mode: ""}
		qp.byKey["\x00*"] = p
		qp.parts = append(qp.parts, p)
		qp.modeOrder = append(qp.modeOrder, "")
		qp.perMode[""] = 1
	}
	// Whole GPUs first, then the modes in order of first use.
	slices.SortStableFunc(qp.modeOrder, func(a, b string) int {
		switch {
		case a == b:
			return 0
		case a == "":
			return -1
		case b == "":
			return 1
		}
		return 0
	})
	return qp
}

// newKueueQueue is the ClusterQueue of part p; split is whether p's mode
// has several parts (then one of some teams takes its first pool's name).
func newKueueQueue(specName string, p *queuePart, split bool) (*kueueQueue, error) {
	cq, lq := QueueNames(specName, p.mode)
	if split && p.teams != nil {
		cq, lq = cq+"-"+objectName(p.first), lq+"-"+objectName(p.first)
	}
	if len(lq) > 63 {
		return nil, fmt.Errorf("pool %s: LocalQueue name %q is longer than the 63 characters of the label value kueue.x-k8s.io/queue-name; shorten the pool's name", p.first, lq)
	}
	sel := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: LabelTeam, Operator: metav1.LabelSelectorOpExists}}}
	if p.teams != nil {
		sel = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: LabelTeam, Operator: metav1.LabelSelectorOpIn, Values: p.teams}}}
	}
	return &kueueQueue{mode: p.mode, teams: p.teams, lq: lq, groups: map[string]int{}, cq: ClusterQueue{
		TypeMeta:   metav1.TypeMeta{APIVersion: KueueAPIVersion, Kind: "ClusterQueue"},
		ObjectMeta: metav1.ObjectMeta{Name: cq},
		Spec: ClusterQueueSpec{
			NamespaceSelector: sel,
			QueueingStrategy:  "BestEffortFIFO",
		},
	}}, nil
}

// teamQuota is the hard limits of a team's GPU ResourceQuota: one
// requests.<resource> per resource name the pools advertise (whole GPUs
// nvidia.com/gpu, renamed shares nvidia.com/gpu.shared, MIG slices
// nvidia.com/mig-<profile>), each the pools' total of that name, capped at
// the team's gpuQuota (0: no cap). A ResourceQuota counts by name only, so
// where a pool advertises shares or slices as nvidia.com/gpu (GKE's
// time-sharing, NVIDIA's plugin without renameByDefault, MIG single), the
// name's limit is the sum of each sharing mode's capped total: the team's
// shares do not use up its whole GPUs' allowance, and Kueue's ClusterQueue
// per mode keeps the modes apart at admission. shared says so where it
// applies ("" elsewhere).
func teamQuota(byMode map[string]map[string]int, cap int) (hard corev1.ResourceList, shared string) {
	hard = corev1.ResourceList{}
	var notes []string
	for _, res := range slices.Sorted(maps.Keys(byMode)) {
		n := 0
		modes := slices.Sorted(maps.Keys(byMode[res]))
		for _, mode := range modes {
			m := byMode[res][mode]
			if cap > 0 && cap < m {
				m = cap
			}
			n += m
		}
		if len(modes) > 1 {
			named := make([]string, len(modes))
			for i, mode := range modes {
				if named[i] = mode; mode == "" {
					named[i] = "whole GPUs"
				}
			}
			notes = append(notes, fmt.Sprintf("requests.%s counts %s together (one resource name), each capped on its own; Kueue's ClusterQueue per mode keeps them apart, and where the device plugin is NVIDIA's, renameByDefault (shares) or migStrategy mixed (MIG slices) gives them a name and a quota of their own", res, strings.Join(named, " and ")))
		}
		hard[corev1.ResourceName("requests."+res)] = *resource.NewQuantity(int64(n), resource.DecimalSI)
	}
	return hard, strings.Join(notes, "; ")
}

// metadataEgress is the egress to the node's metadata server that cloud
// credentials come from (spec.network.workloadIdentity):
//   - GKE Workload Identity: the GKE metadata server at 169.254.169.252
//     port 988, and 169.254.169.254 port 80 where the cluster runs GKE
//     Dataplane V2. Cited as
//     https://cloud.google.com/kubernetes-engine/docs/how-to/workload-identity#limitations,
//     but unconfirmed: no stored copy of a Google page (as of 2026-12-01)
//     gives these addresses and ports; they are what public NetworkPolicies
//     of GKE workloads allow, some of which also open 169.254.169.252 port
//     987 and 169.254.169.254 port 8080, which gpuctl does not.
//   - EKS Pod Identity: the agent at 169.254.170.23 port 80; IRSA and the
//     SDKs' region lookup: the instance metadata service at 169.254.169.254
//     port 80 (IRSA's token exchange goes to STS, an endpoint for
//     spec.network.egressCIDRs). Sources:
//     https://docs.aws.amazon.com/eks/latest/userguide/pod-id-how-it-works.html,
//     https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/instancedata-data-retrieval.html
func metadataEgress(provider string) []networkingv1.NetworkPolicyEgressRule {
	tcp := corev1.ProtocolTCP
	rule := func(cidr string, port int32) networkingv1.NetworkPolicyEgressRule {
		p := intstr.FromInt32(port)
		return networkingv1.NetworkPolicyEgressRule{
			To:    []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: cidr}}},
			Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &p}},
		}
	}
	if provider == spec.ProviderEKS {
		return []networkingv1.NetworkPolicyEgressRule{rule("169.254.170.23/32", 80), rule("169.254.169.254/32", 80)}
	}
	return []networkingv1.NetworkPolicyEgressRule{rule("169.254.169.252/32", 988), rule("169.254.169.254/32", 80)}
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

// networkPolicies are team t's namespace's policies: deny all traffic,
// allow DNS, and let the pods of each training pool the team may use
// (spec.teams[].pools) reach each other on every port (NCCL bootstraps over
// TCP and picks its ports at run time). Training pods carry the label
// gpuctl.dev/pool: <pool> to be covered.
func networkPolicies(s *spec.Spec, t spec.Team) []networkingv1.NetworkPolicy {
	ns := t.Name
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
	if s.Network.WorkloadIdentity {
		out = append(out, networkingv1.NetworkPolicy{TypeMeta: tm, ObjectMeta: metav1.ObjectMeta{Name: "allow-metadata-server", Namespace: ns},
			Spec: networkingv1.NetworkPolicySpec{
				PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
				Egress:      metadataEgress(s.Provider),
			}})
	}
	if len(s.Network.EgressCIDRs) > 0 {
		var to []networkingv1.NetworkPolicyPeer
		for _, c := range s.Network.EgressCIDRs {
			to = append(to, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: c}})
		}
		out = append(out, networkingv1.NetworkPolicy{TypeMeta: tm, ObjectMeta: metav1.ObjectMeta{Name: "allow-egress-cidrs", Namespace: ns},
			Spec: networkingv1.NetworkPolicySpec{
				PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
				Egress:      []networkingv1.NetworkPolicyEgressRule{{To: to}},
			}})
	}
	var training []string
	for _, p := range s.NodePools {
		if p.Role == spec.RoleTraining && t.Uses(p.Name) {
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
