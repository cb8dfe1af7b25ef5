package helmgen

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Rule IDs of the cross-layer findings, documented in the rule catalogue
// (package rules, RuleGen*; check's tests hold the two equal).
const (
	RuleDaemonSetToleration = "GEN-DAEMONSET-TOLERATION"
	RuleDaemonSetSelector   = "GEN-DAEMONSET-SELECTOR"
	RuleKueueResource       = "GEN-KUEUE-RESOURCE"
	RuleDevicePluginOwner   = "GEN-DEVICE-PLUGIN-OWNER"
)

const sourceDCGMIssue = "https://github.com/NVIDIA/dcgm-exporter/issues/731"
const sourceGKEPlugin = "https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/google-gke.html"
const sourceEKSPlugin = "https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-k8s-device-plugin.html"
const sourceEFAPlugin = "https://docs.aws.amazon.com/eks/latest/userguide/node-efa.html"
const sourceGPUDirect = "https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx"
const sourceKueue = "https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/"

// Check cross-checks what generation writes for cs, layer against layer, and
// returns findings like validate's (paths into the resolved spec):
//   - every GPU DaemonSet (device plugin, GPU Operator operands, DCGM
//     exporter) tolerates the taints of the pools it must run on and selects
//     their nodes (the labels the Terraform puts on them);
//   - every Kueue flavor quotas the resource name the pool's plugin
//     advertises;
//   - exactly one device plugin advertises the GPUs of each pool;
//   - the acceptance sweep can run each of its stages
//     (sweepStageFindings).
//
// Errors from building the objects are returned as an error, not findings.
func Check(cs *spec.ClusterSpec) ([]diag.Finding, error) {
	l, err := Build(cs)
	if err != nil {
		return nil, err
	}
	return l.Check()
}

// checkLayers is Check on already built values and manifests.
func checkLayers(cs *spec.ClusterSpec, charts []chartValues, m *manifests) ([]diag.Finding, error) {
	c := &layerCheck{s: &cs.Spec}
	dss := gpuDaemonSets(c.s, charts, m)
	for i := range c.s.NodePools {
		p := &c.s.NodePools[i]
		labels := c.s.NodeLabels(p)
		c.daemonSets(i, p, labels, dss)
		c.pluginOwner(i, p, labels, charts)
	}
	if err := c.kueueResources(m); err != nil {
		return nil, err
	}
	return append(c.out, sweepStageFindings(c.s)...), nil
}

// layerCheck collects the cross-layer findings of spec s.
type layerCheck struct {
	s   *spec.Spec
	out []diag.Finding
}

// add records a finding on field of pool index pool.
func (c *layerCheck) add(rule string, pool int, field, msg, fix string, sources ...string) {
	c.out = append(c.out, diag.Finding{Rule: rule, Severity: diag.SeverityError, Message: msg, Fix: fix, Sources: append([]string{}, sources...), Path: spec.PoolPath(pool) + field})
}

// gpuDaemonSet is a generated GPU DaemonSet as the checks read it: its
// tolerations, whether it selects a pool's node labels, whether it must run
// on a pool, and the source that says so.
type gpuDaemonSet struct {
	name        string
	tolerations []corev1.Toleration
	selects     func(p *spec.NodePool, labels map[string]string) bool
	runsOn      func(p *spec.NodePool) bool
	source      string
}

// gpuDaemonSets are the GPU DaemonSets of the charts' values and of the
// manifests (the GPUDirect DaemonSets of GKE pools, nccl.yaml).
func gpuDaemonSets(s *spec.Spec, charts []chartValues, m *manifests) []gpuDaemonSet {
	var dss []gpuDaemonSet
	for _, c := range charts {
		if ds, ok := chartDaemonSet(s, c); ok {
			dss = append(dss, ds)
		}
	}
	tp := transportPools(s)
	for _, d := range m.daemonSets {
		dss = append(dss, gpuDirectDaemonSet(d.Name, d.Spec.Template.Spec, tp))
	}
	return dss
}

// chartDaemonSet is the GPU DaemonSet of a chart's values; ok is false for
// a chart that runs none.
func chartDaemonSet(s *spec.Spec, c chartValues) (gpuDaemonSet, bool) {
	switch v := c.values.(type) {
	case DevicePluginValues:
		return gpuDaemonSet{"nvidia-device-plugin", v.Tolerations, func(p *spec.NodePool, l map[string]string) bool { return pluginSelects(s, p, v, l) },
			// A pool the chart's nodeSelector leaves out is the matrix's to
			// judge (another plugin serves it, or none: PLUGIN-MISSING).
			func(p *spec.NodePool) bool {
				sel, _ := matrix.HelmPluginSelects(s, p)
				return s.DevicePluginFor(p) == spec.DevicePluginHelm && sel != matrix.NotSelected
			}, sourceEKSPlugin}, true
	case OperatorValues:
		return gpuDaemonSet{"gpu-operator operands", v.Daemonsets.Tolerations, func(_ *spec.NodePool, l map[string]string) bool {
			return l[spec.LabelOperatorDeployOperands] != "false"
		},
			func(p *spec.NodePool) bool { return s.DevicePluginFor(p) == spec.DevicePluginGPUOperator }, sourceGKEPlugin}, true
	case DCGMExporterValues:
		return gpuDaemonSet{"dcgm-exporter", v.Tolerations, func(_ *spec.NodePool, l map[string]string) bool { return matchesAll(v.NodeSelector, l) },
			func(p *spec.NodePool) bool { return standaloneDCGM(s, p) }, sourceDCGMIssue}, true
	case EFADevicePluginValues:
		aff := efaAffinity(v)
		return gpuDaemonSet{ChartEFADevicePlugin, v.Tolerations, func(_ *spec.NodePool, l map[string]string) bool { return affinitySelects(aff)(l) },
			func(p *spec.NodePool) bool { return p.EFA.Enabled && s.Provider == spec.ProviderEKS }, sourceEFAPlugin}, true
	}
	return gpuDaemonSet{}, false
}

// efaAffinity is the node affinity the EFA device plugin chart builds from
// its supportedInstanceLabels: one term per label key.
func efaAffinity(v EFADevicePluginValues) *corev1.Affinity {
	sel := &corev1.NodeSelector{}
	for _, k := range v.SupportedInstanceLabels.Keys {
		sel.NodeSelectorTerms = append(sel.NodeSelectorTerms,
			corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: k, Operator: corev1.NodeSelectorOpIn, Values: v.SupportedInstanceLabels.Values}}})
	}
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: sel}}
}

// gpuDirectFabrics are the fabrics each GPUDirect DaemonSet of nccl.yaml
// serves.
var gpuDirectFabrics = map[string][]string{
	"nccl-tcpx-installer":  {matrix.FabricTCPX},
	"nccl-tcpxo-installer": {matrix.FabricTCPXO},
	"nccl-rdma-installer":  {matrix.FabricRoCE},
	"device-injector":      {matrix.FabricTCPX, matrix.FabricTCPXO},
}

// gpuDirectDaemonSet is GPUDirect DaemonSet name with pod spec pod: it must
// run on the pools of its fabrics (tp: the pools of each fabric).
func gpuDirectDaemonSet(name string, pod corev1.PodSpec, tp map[string][]spec.NodePool) gpuDaemonSet {
	fabrics := gpuDirectFabrics[name]
	return gpuDaemonSet{name, pod.Tolerations, func(_ *spec.NodePool, l map[string]string) bool { return affinitySelects(pod.Affinity)(l) },
		func(p *spec.NodePool) bool {
			for _, f := range fabrics {
				for _, q := range tp[f] {
					if q.Name == p.Name {
						return true
					}
				}
			}
			return false
		}, sourceGPUDirect}
}

// daemonSets checks that every DaemonSet that must run on pool p (index i,
// node labels labels) selects its nodes and tolerates its taints.
func (c *layerCheck) daemonSets(i int, p *spec.NodePool, labels map[string]string, dss []gpuDaemonSet) {
	for _, ds := range dss {
		if !ds.runsOn(p) {
			continue
		}
		if !ds.selects(p, labels) {
			c.add(RuleDaemonSetSelector, i, ".labels",
				fmt.Sprintf("the %s DaemonSet does not select the nodes of pool %s", ds.name, p.Name),
				"regenerate all layers from the same spec; do not edit the generated labels or selectors by hand", ds.source)
		}
		for _, t := range p.NodeTaints() {
			if !tolerates(ds.tolerations, t) {
				c.add(RuleDaemonSetToleration, i, ".taints",
					fmt.Sprintf("the %s DaemonSet does not tolerate taint %s=%s:%s of pool %s, so it schedules no pod there", ds.name, t.Key, t.Value, t.Effect, p.Name),
					"regenerate all layers from the same spec", ds.source)
			}
		}
	}
}

// pluginOwner checks that exactly one device plugin advertises the GPUs of
// pool p (index i, node labels labels).
func (c *layerCheck) pluginOwner(i int, p *spec.NodePool, labels map[string]string, charts []chartValues) {
	owners := pluginOwners(c.s, p, labels, charts)
	switch {
	case len(owners) > 1:
		c.add(RuleDevicePluginOwner, i, ".devicePlugin",
			fmt.Sprintf("pool %s would have %d device plugins advertising its GPUs (%v); they conflict", p.Name, len(owners), owners),
			"give the pool exactly one device plugin: on GKE use gke-managed, or NVIDIA's plugin with gpu.driver INSTALLATION_DISABLED; on Bottlerocket NVIDIA AMIs use provider bottlerocket",
			sourceGKEPlugin, sourceEKSPlugin)
	case len(owners) == 0 && c.s.DevicePluginFor(p) != spec.DevicePluginNone:
		c.add(RuleDevicePluginOwner, i, ".devicePlugin",
			fmt.Sprintf("no device plugin would advertise the GPUs of pool %s (device plugin %q)", p.Name, c.s.DevicePluginFor(p)),
			"pick a device plugin that runs on this pool's image: bottlerocket only on Bottlerocket NVIDIA AMIs, helm or gpu-operator elsewhere",
			sourceEKSPlugin)
	}
}

// pluginOwners are the device plugins that would advertise the GPUs of
// pool p: the platform's, the image's and the charts'.
func pluginOwners(s *spec.Spec, p *spec.NodePool, labels map[string]string, charts []chartValues) []string {
	var owners []string
	if s.Provider == spec.ProviderGKE && labels[spec.LabelGKENoDefaultPlugin] != "true" {
		owners = append(owners, "GKE's device plugin")
	}
	if isBottlerocketNVIDIA(p.OSImage) {
		owners = append(owners, "Bottlerocket's built-in device plugin")
	}
	for _, c := range charts {
		switch v := c.values.(type) {
		case DevicePluginValues:
			if pluginSelects(s, p, v, labels) {
				owners = append(owners, "the nvidia-device-plugin chart")
			}
		case OperatorValues:
			if v.DevicePlugin.Enabled && labels[spec.LabelOperatorDeployOperands] != "false" && labels[spec.LabelOperatorDeployDevicePlugin] != "false" {
				owners = append(owners, "the GPU Operator's device plugin")
			}
		}
	}
	return owners
}

// kueueResources checks the Kueue quotas against what the plugins
// advertise: every flavor of a pool quotas the pool's resource name.
func (c *layerCheck) kueueResources(m *manifests) error {
	flavors := poolIndex(c.s, func(p *spec.NodePool) string { return objectName(p.Name) })
	for _, rg := range allGroups(m.queues) {
		for _, f := range rg.Flavors {
			i, ok := flavors[f.Name]
			if !ok {
				continue
			}
			p := &c.s.NodePools[i]
			a, err := AdvertisedBy(c.s, p)
			if err != nil {
				return err
			}
			for _, r := range f.Resources {
				if r.Name != ResourceEFA && string(r.Name) != a.Resource {
					c.add(RuleKueueResource, i, ".gpu.sharing",
						fmt.Sprintf("Kueue flavor %s quotas %s, but the device plugin of pool %s advertises %s: workloads would never be admitted", f.Name, r.Name, p.Name, a.Resource),
						"regenerate the manifests from the same spec as the Helm values", sourceKueue)
				}
			}
		}
	}
	return nil
}

func allGroups(queues []ClusterQueue) []ResourceGroup {
	var out []ResourceGroup
	for _, q := range queues {
		out = append(out, q.Spec.ResourceGroups...)
	}
	return out
}

func isBottlerocketNVIDIA(ami string) bool {
	return strings.HasPrefix(ami, "BOTTLEROCKET_") && strings.Contains(ami, "_NVIDIA")
}

func matchesAll(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// affinitySelects evaluates required node affinity (In/NotIn/Exists/
// DoesNotExist; terms ORed, expressions ANDed) against node labels. No
// affinity selects every node.
func affinitySelects(a *corev1.Affinity) func(map[string]string) bool {
	return func(labels map[string]string) bool {
		if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
			return true
		}
		for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			if termSelects(term, labels) {
				return true
			}
		}
		return false
	}
}

// termSelects reports whether every expression of a node selector term
// holds for labels (an unknown operator holds for none).
func termSelects(term corev1.NodeSelectorTerm, labels map[string]string) bool {
	for _, e := range term.MatchExpressions {
		v, has := labels[e.Key]
		var ok bool
		switch e.Operator {
		case corev1.NodeSelectorOpIn:
			ok = has && inList(v, e.Values)
		case corev1.NodeSelectorOpNotIn:
			ok = !(has && inList(v, e.Values))
		case corev1.NodeSelectorOpExists:
			ok = has
		case corev1.NodeSelectorOpDoesNotExist:
			ok = !has
		}
		if !ok {
			return false
		}
	}
	return true
}

func inList(v string, list []string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// tolerates reports whether one of tols tolerates taint t (Kubernetes
// semantics: empty key with Exists tolerates everything; empty effect
// matches every effect).
func tolerates(tols []corev1.Toleration, t spec.Taint) bool {
	for _, tol := range tols {
		if tol.Effect != "" && string(tol.Effect) != t.Effect {
			continue
		}
		if tol.Key == "" && tol.Operator == corev1.TolerationOpExists {
			return true
		}
		if tol.Key != t.Key {
			continue
		}
		if tol.Operator == corev1.TolerationOpExists || tol.Value == t.Value {
			return true
		}
	}
	return false
}

// pluginSelects reports whether the device plugin chart's DaemonSet runs on
// pool p: its affinity selects the pool's labels and its nodeSelector does
// not leave the pool out (a selector label the spec cannot know for the
// pool counts as matching, as validate counts it).
func pluginSelects(s *spec.Spec, p *spec.NodePool, v DevicePluginValues, labels map[string]string) bool {
	if !affinitySelects(v.Affinity)(labels) {
		return false
	}
	sel, _ := matrix.SelectorSelects(s, p, v.NodeSelector)
	return sel != matrix.NotSelected
}
