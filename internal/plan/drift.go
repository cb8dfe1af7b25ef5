package plan

import (
	"context"
	"fmt"
	"regexp"
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
	out := []NodeDrift{}
	live := map[string][]ZoneNodes{}
	s := &cs.Spec
	for i := range s.NodePools {
		p := &s.NodePools[i]
		rp := pools[i]
		label := PoolLabel(s.Provider)
		nodes, err := kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: label + "=" + p.Name})
		if err != nil {
			return nil, nil, fmt.Errorf("list nodes of pool %s: %w", p.Name, err)
		}
		items := nodes.Items
		sort.Slice(items, func(a, b int) bool { return items[a].Name < items[b].Name })
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
				return nil, nil, fmt.Errorf("list pods on node %s: %w", n.Name, err)
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
	return out, live, nil
}

func nodeDrift(doc *spec.Document, env string, cs *spec.ClusterSpec, i int, rp Pool, n *corev1.Node, pods []corev1.Pod) NodeDrift {
	s := &cs.Spec
	p := &s.NodePools[i]
	path := spec.PoolPath(i)
	at := func(f string) string { return poolAt(doc, env, path+f) }
	d := NodeDrift{Environment: env, Pool: p.Name, Node: n.Name, Zone: n.Labels[LabelZone], Fields: []FieldDrift{}}
	add := func(field, expected, observed, state, at, source string) {
		d.Fields = append(d.Fields, FieldDrift{field, expected, observed, state, at, source})
		if state == StateDrift {
			d.Drifted = true
		}
	}
	judge := func(ok bool, observed string) string {
		switch {
		case observed == "":
			return StateUnknown
		case ok:
			return StateOK
		}
		return StateDrift
	}
	if mts := p.MachineTypes(); len(mts) > 0 {
		it := accept.InstanceType(n)
		add("machineType", strings.Join(mts, " | "), it, judge(contains(mts, it), it), at(".machineType"), accept.LabelInstanceType)
	}
	if rp.GPU != "" {
		obs := n.Labels[accept.LabelGFDProduct]
		add("gpu.type", rp.GPU, obs, judge(matrix.SameGPU(rp.GPU, obs), obs), at(".gpu.type"), accept.LabelGFDProduct)
	}
	if rp.GPUsPerNode > 0 {
		obs := n.Labels[accept.LabelGFDCount]
		add("gpu.count", strconv.Itoa(rp.GPUsPerNode), obs, judge(obs == strconv.Itoa(rp.GPUsPerNode), obs), at(".gpu.count"), accept.LabelGFDCount)
	}
	if rp.Driver.Version != "" || rp.Driver.Branch != 0 {
		obs := accept.DriverFromLabels(n)
		want, ok := rp.Driver.Version, false
		if want != "" {
			ok = obs == want || strings.HasPrefix(obs, want+".")
		} else {
			want = fmt.Sprintf("R%d", rp.Driver.Branch)
			ok = strings.HasPrefix(obs, strconv.Itoa(rp.Driver.Branch)+".")
		}
		add("driver", want+" ("+rp.Driver.Owner+")", obs, judge(ok, obs), rp.Driver.At, "nvidia.com/cuda.driver-version.*")
	}
	if c := s.CUDAVersion(p); c != "" && p.CUDACompat == "" {
		obs := accept.DriverCUDAFromLabels(n)
		add("cuda", ">= "+c+" (the driver's CUDA)", obs, judge(obs != "" && accept.CompareVersions(obs, minorOf(c)) >= 0, obs), cudaAt(doc, env, p, path), "nvidia.com/cuda.runtime-version.*")
	}
	if s.KubernetesVersion != "" {
		want, obs := minorOf(s.KubernetesVersion), n.Status.NodeInfo.KubeletVersion
		add("kubernetesVersion", want, obs, judge(minorOf(obs) == want, obs), poolAt(doc, env, "spec.kubernetesVersion"), "status.nodeInfo.kubeletVersion")
	}
	if img := osImage(s.Provider, p.OSImage); img != "" {
		obs := n.Status.NodeInfo.OSImage
		add("osImage", img, obs, judge(strings.Contains(obs, img) && !(img == "Amazon Linux 2" && strings.Contains(obs, "2023")), obs), at(".osImage"), "status.nodeInfo.osImage")
	}
	for j, t := range p.Taints {
		has := false
		for _, nt := range n.Spec.Taints {
			has = has || (nt.Key == t.Key && nt.Value == t.Value && string(nt.Effect) == t.Effect)
		}
		obs := "absent"
		if has {
			obs = "present"
		}
		add("taints["+strconv.Itoa(j)+"]", taintString(t), obs, judge(has, obs), at(fmt.Sprintf(".taints[%d]", j)), "spec.taints")
	}
	if rp.DevicePlugin != spec.DevicePluginNone {
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
		add("devicePlugin", "1 device plugin pod ("+rp.DevicePlugin+")", obs, judge(len(names) == 1, obs), devicePluginAt(doc, env, p, path), "pods on the node")
	}
	// The last verdict `accept --mark` left on the node: anything but
	// pass (fail, inconclusive) needs attention before the node takes
	// work. A node never marked says nothing and is not judged.
	if v, ok := n.Labels[accept.LabelAccept]; ok {
		add("acceptance", strings.ToLower(string(diag.Pass)), v, judge(v == strings.ToLower(string(diag.Pass)), v), at(""), accept.LabelAccept)
	}
	return d
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
