package accept

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// poolLabels are the node-pool labels of GKE, EKS, Karpenter and kops.
var poolLabels = []string{"cloud.google.com/gke-nodepool", "eks.amazonaws.com/nodegroup", "karpenter.sh/nodepool", "kops.k8s.io/instancegroup"}

// DescribeNode returns the node's facts; pods are the pods on the node.
func DescribeNode(n *corev1.Node, pods []corev1.Pod) *NodeFacts {
	f := &NodeFacts{
		Name: n.Name, UID: string(n.UID), ProviderID: n.Spec.ProviderID,
		Zone: n.Labels[LabelZone], InstanceType: InstanceType(n),
		OSImage: n.Status.NodeInfo.OSImage, KernelVersion: n.Status.NodeInfo.KernelVersion,
		Architecture: n.Status.NodeInfo.Architecture, ContainerRuntime: n.Status.NodeInfo.ContainerRuntimeVersion,
		Kubelet: n.Status.NodeInfo.KubeletVersion,
	}
	for _, l := range poolLabels {
		if v := n.Labels[l]; v != "" {
			f.Pool = v
			break
		}
	}
	for _, p := range pods {
		if isDevicePlugin(&p) && f.DevicePlugin == "" && len(p.Spec.Containers) > 0 {
			f.DevicePlugin = p.Spec.Containers[0].Image
		}
		if strings.Contains(p.Namespace+"/"+p.Name, "gpu-operator") && f.GPUOperator == "" && len(p.Spec.Containers) > 0 {
			f.GPUOperator = p.Spec.Containers[0].Image
		}
	}
	return f
}

func isDevicePlugin(p *corev1.Pod) bool {
	if strings.Contains(p.Name, "device-plugin") {
		return true
	}
	for _, v := range p.Labels {
		if strings.Contains(v, "device-plugin") {
			return true
		}
	}
	return false
}

// podGPUs returns the nvidia.com/gpu a pod holds (limits of its containers).
func podGPUs(p *corev1.Pod) int64 {
	var n int64
	for _, c := range append(append([]corev1.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...) {
		if q, ok := c.Resources.Limits[ResourceGPU]; ok {
			n += q.Value()
		} else if q, ok := c.Resources.Requests[ResourceGPU]; ok {
			n += q.Value()
		}
	}
	return n
}

// JudgeKubernetes decides the API-only stage from the node and the pods on
// it: node Ready, whole GPUs advertised as expected, GFD labels consistent,
// the expected taints, a device plugin Running, and no other pod holding
// GPUs (INCONCLUSIVE "GPUs in use" unless force). runID excludes the run's
// own pods.
func JudgeKubernetes(n *corev1.Node, pods []corev1.Pod, exp Expectations, runID string, force bool) StageResult {
	return withCause(judgeKubernetes(n, pods, exp, runID, force), CauseNode)
}

func judgeKubernetes(n *corev1.Node, pods []corev1.Pod, exp Expectations, runID string, force bool) StageResult {
	const st = StageKubernetes
	if !nodeReady(n) {
		return result(st, diag.Fail, "node %s is not Ready", n.Name)
	}
	// Shared or partitioned GPUs: accept runs on whole GPUs only.
	if shared := sharedGPUResources(n); len(shared) > 0 {
		return withCause(result(st, diag.Inconclusive, "node advertises shared or MIG GPU resources (%s): accept probes whole GPUs only", strings.Join(shared, ", ")), CauseNode)
	}
	capacity, allocatable := GPUCapacity(n)
	if capacity == 0 {
		return result(st, diag.Fail, "node advertises no %s", ResourceGPU)
	}
	problems := append(gpuProblems(n, exp, capacity, allocatable), taintProblems(n, exp)...)
	if !devicePluginRunning(pods, runID) {
		problems = append(problems, "no device plugin pod Running on the node")
	}
	if len(problems) > 0 {
		return result(st, diag.Fail, "%s", strings.Join(problems, "; "))
	}
	busy := gpuHolders(pods, runID)
	sort.Strings(busy) // also for --force's reason: live and re-judged runs list pods in different orders
	if len(busy) > 0 && !force {
		return withCause(result(st, diag.Inconclusive, "GPUs in use by %s (use --force to probe anyway)", strings.Join(busy, ", ")), CauseCluster)
	}
	r := result(st, diag.Pass, "node Ready, %d GPUs advertised and allocatable, device plugin Running", capacity)
	if len(busy) > 0 {
		r.Reason += "; --force: GPUs in use by " + strings.Join(busy, ", ")
	}
	return r
}

// nodeReady reports whether n's Ready condition is True.
func nodeReady(n *corev1.Node) bool {
	ready := false
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			ready = c.Status == corev1.ConditionTrue
		}
	}
	return ready
}

// sharedGPUResources lists, sorted, what says n's GPUs are shared or
// partitioned: MIG or shared resources in its capacity, GFD's replicas and
// sharing-strategy labels.
func sharedGPUResources(n *corev1.Node) []string {
	var shared []string
	for name := range n.Status.Capacity {
		if s := string(name); strings.HasPrefix(s, "nvidia.com/mig-") || s == "nvidia.com/gpu.shared" {
			shared = append(shared, s)
		}
	}
	if r := n.Labels[LabelGFDReplicas]; r != "" && r != "0" && r != "1" {
		shared = append(shared, fmt.Sprintf("%s=%s", LabelGFDReplicas, r))
	}
	if s := n.Labels[LabelGFDSharing]; s != "" && s != "none" {
		shared = append(shared, fmt.Sprintf("%s=%s", LabelGFDSharing, s))
	}
	sort.Strings(shared)
	return shared
}

// gpuProblems compares n's GPU capacity, allocatable GPUs and GFD product
// and driver labels with exp.
func gpuProblems(n *corev1.Node, exp Expectations, capacity, allocatable int) []string {
	var problems []string
	if exp.GPUCount > 0 && capacity != exp.GPUCount {
		problems = append(problems, fmt.Sprintf("capacity %s=%d, expected %d (%s)", ResourceGPU, capacity, exp.GPUCount, exp.Source))
	}
	if allocatable != capacity {
		problems = append(problems, fmt.Sprintf("allocatable %s=%d of capacity %d", ResourceGPU, allocatable, capacity))
	}
	if p := n.Labels[LabelGFDProduct]; p != "" && exp.GPUProduct != "" && !ProductMatches(exp.GPUProduct, p) {
		problems = append(problems, fmt.Sprintf("label %s=%s, expected %s (%s)", LabelGFDProduct, p, exp.GPUProduct, exp.Source))
	}
	if d := DriverFromLabels(n); d != "" && exp.DriverVersion != "" && !driverMatches(exp.DriverVersion, d) {
		problems = append(problems, fmt.Sprintf("GFD driver label %s, expected %s (%s)", d, exp.DriverVersion, exp.Source))
	}
	return problems
}

// taintProblems names each expected taint n lacks (key, value and effect).
func taintProblems(n *corev1.Node, exp Expectations) []string {
	var problems []string
	for _, want := range exp.Taints {
		found := false
		for _, t := range n.Spec.Taints {
			if t.Key == want.Key && t.Value == want.Value && string(t.Effect) == want.Effect {
				found = true
			}
		}
		if !found {
			problems = append(problems, fmt.Sprintf("taint %s=%s:%s missing (%s)", want.Key, want.Value, want.Effect, exp.Source))
		}
	}
	return problems
}

// devicePluginRunning reports whether a device plugin pod (not the run's
// own) is Running among pods.
func devicePluginRunning(pods []corev1.Pod, runID string) bool {
	for i := range pods {
		p := &pods[i]
		if isDevicePlugin(p) && p.Status.Phase == corev1.PodRunning && (p.Labels[LabelRunID] != runID || runID == "") {
			return true
		}
	}
	return false
}

// gpuHolders lists the pods (other than the run's own) that hold GPUs and
// have not finished, as "namespace/name (GPUs)".
func gpuHolders(pods []corev1.Pod, runID string) []string {
	var busy []string
	for i := range pods {
		p := &pods[i]
		if p.Labels[LabelRunID] == runID && runID != "" {
			continue
		}
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if g := podGPUs(p); g > 0 {
			busy = append(busy, fmt.Sprintf("%s/%s (%d)", p.Namespace, p.Name, g))
		}
	}
	return busy
}

func resourceQuantity(n int64) *resource.Quantity { return resource.NewQuantity(n, resource.DecimalSI) }

// DriverFromLabels returns the driver version GPU Feature Discovery put on
// the node ("535.161.08"), or "".
func DriverFromLabels(n *corev1.Node) string {
	if v := n.Labels["nvidia.com/cuda.driver-version.full"]; v != "" {
		return v
	}
	for _, prefix := range []string{"nvidia.com/cuda.driver-version.", "nvidia.com/cuda.driver."} {
		maj, min, rev := n.Labels[prefix+"major"], n.Labels[prefix+"minor"], n.Labels[prefix+"revision"]
		if rev == "" {
			rev = n.Labels[prefix+"rev"]
		}
		if maj != "" && min != "" {
			v := maj + "." + min
			if rev != "" {
				v += "." + rev
			}
			return v
		}
	}
	return ""
}
