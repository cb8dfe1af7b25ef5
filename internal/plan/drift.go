package plan

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Field states of a drift check.
const (
	StateOK      = "ok"
	StateDrift   = "drift"
	StateUnknown = "unknown" // the node does not say (a label GFD did not write)
)

// NodeDrift is one live node of a spec pool against the spec. A pool
// without nodes has one entry with Node "" and the field "nodes".
type NodeDrift struct {
	Environment string       `json:"environment"`
	Pool        string       `json:"pool"`
	Node        string       `json:"node"`
	Zone        string       `json:"zone"`
	Drifted     bool         `json:"drifted"`
	Fields      []FieldDrift `json:"fields"`
}

// FieldDrift is one expectation of the spec and what the node says.
type FieldDrift struct {
	Field    string `json:"field"`
	Expected string `json:"expected"`
	Observed string `json:"observed"`
	State    string `json:"state"`
	// At is the spec's file:line of the expectation; Source what on the
	// node was read (a label, nodeInfo, taints, pods).
	At     string `json:"at"`
	Source string `json:"source"`
}

// osImageNames are the words of the OS image kubelet reports
// (status.nodeInfo.osImage, /etc/os-release PRETTY_NAME) for each
// spec.osImage prefix.
// Source: https://kubernetes.io/docs/reference/node/node-status/#info (as of 2026-11-29)
var osImageNames = []struct{ prefix, name string }{
	{"COS_CONTAINERD", "Container-Optimized OS"},
	{"UBUNTU_CONTAINERD", "Ubuntu"},
	{"AL2023_", "Amazon Linux 2023"},
	{"AL2_", "Amazon Linux 2"},
	{"BOTTLEROCKET_", "Bottlerocket"},
}

var minorRE = regexp.MustCompile(`^v?(\d+)\.(\d+)`)

// Drift reads the nodes of every pool of env's resolved spec from the
// cluster (list calls only) and compares them with the spec. pools are
// env's resolved pools (ResolvePools).
func Drift(ctx context.Context, kc kubernetes.Interface, doc *spec.Document, env string, cs *spec.ClusterSpec, pools []Pool) ([]NodeDrift, map[string][]ZoneNodes, error) {
	out, live, _, err := driftNodes(ctx, kc, doc, env, cs, pools)
	return out, live, err
}

// driftNodes is Drift, with the Node objects of each pool it read (by
// pool name, sorted by node name).
func driftNodes(ctx context.Context, kc kubernetes.Interface, doc *spec.Document, env string, cs *spec.ClusterSpec, pools []Pool) ([]NodeDrift, map[string][]ZoneNodes, map[string][]corev1.Node, error) {
	out := []NodeDrift{}
	live := map[string][]ZoneNodes{}
	read := map[string][]corev1.Node{}
	s := &cs.Spec
	for i := range s.NodePools {
		p := &s.NodePools[i]
		rp := pools[i]
		label := PoolLabel(s.Provider)
		nodes, err := kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: label + "=" + p.Name})
		if err != nil {
			return nil, nil, nil, fmt.Errorf("list nodes of pool %s: %w", p.Name, err)
		}
		items := nodes.Items
		sort.Slice(items, func(a, b int) bool { return items[a].Name < items[b].Name })
		read[p.Name] = items
		if len(items) == 0 {
			d := NodeDrift{Environment: env, Pool: p.Name, Fields: []FieldDrift{{Field: "nodes", Expected: fmt.Sprintf(">= %d (autoscaling.min)", p.Autoscaling.Min),
				Observed: "0", State: StateOK, At: poolAt(doc, env, spec.PoolPath(i)+".autoscaling.min"), Source: "nodes labelled " + label + "=" + p.Name}}}
			if p.Autoscaling.Min > 0 {
				d.Fields[0].State, d.Drifted = StateDrift, true
			}
			out = append(out, d)
			continue
		}
		zones := map[string]*ZoneNodes{}
		var order []string
		for _, n := range items {
			pods, err := kc.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", n.Name).String()})
			if err != nil {
				return nil, nil, nil, fmt.Errorf("list pods on node %s: %w", n.Name, err)
			}
			var onNode []corev1.Pod
			for _, pod := range pods.Items {
				if pod.Spec.NodeName == n.Name {
					onNode = append(onNode, pod)
				}
			}
			d := nodeDrift(doc, env, cs, i, rp, &n, onNode)
			out = append(out, d)
			z := n.Labels[LabelZone]
			if zones[z] == nil {
				zones[z] = &ZoneNodes{Zone: z, NodeNames: []string{}}
				order = append(order, z)
			}
			zones[z].Nodes++
			zones[z].NodeNames = append(zones[z].NodeNames, n.Name)
		}
		sort.Strings(order)
		for _, z := range order {
			live[p.Name] = append(live[p.Name], *zones[z])
		}
	}
	return out, live, read, nil
}

// nodeDrift compares node n (with its pods) with pool i of environment
// env's resolved spec cs (rp: the pool as plan resolved it), field by
// field.
func nodeDrift(doc *spec.Document, env string, cs *spec.ClusterSpec, i int, rp Pool, n *corev1.Node, pods []corev1.Pod) NodeDrift {
	p := &cs.Spec.NodePools[i]
	c := &nodeCompare{doc: doc, env: env, s: &cs.Spec, p: p, path: spec.PoolPath(i), rp: rp, n: n,
		d: NodeDrift{Environment: env, Pool: p.Name, Node: n.Name, Zone: n.Labels[LabelZone], Fields: []FieldDrift{}}}
	c.machine()
	c.driver()
	c.versions()
	c.taints()
	c.devicePlugin(pods)
	c.acceptance()
	return c.d
}

// nodeCompare is one node being compared with its pool p of spec s (path:
// the pool's path in the spec); d collects the fields.
type nodeCompare struct {
	doc  *spec.Document
	env  string
	s    *spec.Spec
	p    *spec.NodePool
	path string
	rp   Pool
	n    *corev1.Node
	d    NodeDrift
}

// at is where field f of the pool is written in the spec file.
func (c *nodeCompare) at(f string) string { return poolAt(c.doc, c.env, c.path+f) }

// add records one field; a drifted one marks the node drifted.
func (c *nodeCompare) add(field, expected, observed, state, at, source string) {
	c.d.Fields = append(c.d.Fields, FieldDrift{field, expected, observed, state, at, source})
	if state == StateDrift {
		c.d.Drifted = true
	}
}

// judge is a field's state: unknown where nothing was observed, else ok or
// drift.
func judge(ok bool, observed string) string {
	switch {
	case observed == "":
		return StateUnknown
	case ok:
		return StateOK
	}
	return StateDrift
}

// machine compares the instance type and the GPUs' product and count.
func (c *nodeCompare) machine() {
	n, rp := c.n, c.rp
	if mts := c.p.MachineTypes(); len(mts) > 0 {
		it := accept.InstanceType(n)
		c.add("machineType", strings.Join(mts, " | "), it, judge(contains(mts, it), it), c.at(".machineType"), accept.LabelInstanceType)
	}
	if rp.GPU != "" {
		obs := n.Labels[accept.LabelGFDProduct]
		c.add("gpu.type", rp.GPU, obs, judge(matrix.SameGPU(rp.GPU, obs), obs), c.at(".gpu.type"), accept.LabelGFDProduct)
	}
	if rp.GPUsPerNode > 0 {
		obs := n.Labels[accept.LabelGFDCount]
		c.add("gpu.count", strconv.Itoa(rp.GPUsPerNode), obs, judge(obs == strconv.Itoa(rp.GPUsPerNode), obs), c.at(".gpu.count"), accept.LabelGFDCount)
	}
}

// driver compares the driver version (or branch) the pool resolves to.
func (c *nodeCompare) driver() {
	dr := c.rp.Driver
	if dr.Version == "" && dr.Branch == 0 {
		return
	}
	obs := accept.DriverFromLabels(c.n)
	want, ok := dr.Version, false
	if want != "" {
		ok = obs == want || strings.HasPrefix(obs, want+".")
	} else {
		want = fmt.Sprintf("R%d", dr.Branch)
		ok = strings.HasPrefix(obs, strconv.Itoa(dr.Branch)+".")
	}
	c.add("driver", want+" ("+dr.Owner+")", obs, judge(ok, obs), dr.At, "nvidia.com/cuda.driver-version.*")
}

// versions compares the driver's CUDA (without a cuda-compat package), the
// kubelet's minor and the OS image.
func (c *nodeCompare) versions() {
	s, p, n := c.s, c.p, c.n
	if v := s.CUDAVersion(p); v != "" && p.CUDACompat == "" {
		obs := accept.DriverCUDAFromLabels(n)
		c.add("cuda", ">= "+v+" (the driver's CUDA)", obs, judge(obs != "" && accept.CompareVersions(obs, minorOf(v)) >= 0, obs), cudaAt(c.doc, c.env, p, c.path), "nvidia.com/cuda.runtime-version.*")
	}
	if s.KubernetesVersion != "" {
		want, obs := minorOf(s.KubernetesVersion), n.Status.NodeInfo.KubeletVersion
		c.add("kubernetesVersion", want, obs, judge(minorOf(obs) == want, obs), poolAt(c.doc, c.env, "spec.kubernetesVersion"), "status.nodeInfo.kubeletVersion")
	}
	if img := osImage(s.Provider, p.OSImage); img != "" {
		obs := n.Status.NodeInfo.OSImage
		c.add("osImage", img, obs, judge(strings.Contains(obs, img) && !(img == "Amazon Linux 2" && strings.Contains(obs, "2023")), obs), c.at(".osImage"), "status.nodeInfo.osImage")
	}
}

// taints checks that the node carries every taint of the pool.
func (c *nodeCompare) taints() {
	for j, t := range c.p.Taints {
		has := slices.ContainsFunc(c.n.Spec.Taints, func(nt corev1.Taint) bool {
			return nt.Key == t.Key && nt.Value == t.Value && string(nt.Effect) == t.Effect
		})
		obs := "absent"
		if has {
			obs = "present"
		}
		c.add("taints["+strconv.Itoa(j)+"]", taintString(t), obs, judge(has, obs), c.at(fmt.Sprintf(".taints[%d]", j)), "spec.taints")
	}
}

// devicePlugin checks that exactly one device plugin pod runs (neither
// succeeded nor failed) on the node.
func (c *nodeCompare) devicePlugin(pods []corev1.Pod) {
	if c.rp.DevicePlugin == spec.DevicePluginNone {
		return
	}
	var names []string
	for k := range pods {
		if accept.IsDevicePluginPod(&pods[k]) && pods[k].Status.Phase != corev1.PodSucceeded && pods[k].Status.Phase != corev1.PodFailed {
			names = append(names, pods[k].Namespace+"/"+pods[k].Name)
		}
	}
	sort.Strings(names)
	obs := fmt.Sprintf("%d", len(names))
	if len(names) > 0 {
		obs += " (" + strings.Join(names, ", ") + ")"
	}
	c.add("devicePlugin", "1 device plugin pod ("+c.rp.DevicePlugin+")", obs, judge(len(names) == 1, obs), devicePluginAt(c.doc, c.env, c.p, c.path), "pods on the node")
}

// acceptance reads the last verdict `accept --mark` left on the node:
// anything but pass (fail, inconclusive) needs attention before the node
// takes work. A node never marked says nothing and is not judged.
func (c *nodeCompare) acceptance() {
	if v, ok := c.n.Labels[accept.LabelAccept]; ok {
		pass := strings.ToLower(string(diag.Pass))
		c.add("acceptance", pass, v, judge(v == pass, v), c.at(""), accept.LabelAccept)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func minorOf(v string) string {
	m := minorRE.FindStringSubmatch(v)
	if m == nil {
		return v
	}
	return m[1] + "." + m[2]
}

// osImage is the OS name kubelet reports for spec osImage on provider;
// GKE's default image is COS; "" when gpuctl cannot tell.
func osImage(provider, img string) string {
	if img == "" && provider == spec.ProviderGKE {
		img = "COS_CONTAINERD"
	}
	for _, o := range osImageNames {
		if strings.HasPrefix(img, o.prefix) {
			return o.name
		}
	}
	return ""
}

func cudaAt(doc *spec.Document, env string, p *spec.NodePool, path string) string {
	if p.CUDA != "" {
		return poolAt(doc, env, path+".cuda")
	}
	return poolAt(doc, env, "spec.cuda")
}

func devicePluginAt(doc *spec.Document, env string, p *spec.NodePool, path string) string {
	if p.DevicePlugin != nil && p.DevicePlugin.Provider != "" {
		return poolAt(doc, env, path+".devicePlugin.provider")
	}
	return poolAt(doc, env, "spec.addons.devicePlugin.provider")
}
