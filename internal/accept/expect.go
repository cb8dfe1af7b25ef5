package accept

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// Catalogue looks up a cloud machine type's GPUs: the product name and how
// many. internal/matrix provides the real one.
type Catalogue interface {
	LookupMachine(machineType string) (product string, gpus int, ok bool)
}

// Well-known node labels read by accept.
const (
	LabelInstanceType     = "node.kubernetes.io/instance-type"
	LabelInstanceTypeBeta = "beta.kubernetes.io/instance-type"
	LabelZone             = "topology.kubernetes.io/zone"
	LabelGFDProduct       = "nvidia.com/gpu.product"
	LabelGFDCount         = "nvidia.com/gpu.count"
	LabelGFDReplicas      = "nvidia.com/gpu.replicas"
	LabelGFDSharing       = "nvidia.com/gpu.sharing-strategy"
	LabelMIGStrategy      = "nvidia.com/mig.strategy"
)

// InstanceType returns the node's instance/machine type label.
func InstanceType(n *corev1.Node) string {
	if v := n.Labels[LabelInstanceType]; v != "" {
		return v
	}
	return n.Labels[LabelInstanceTypeBeta]
}

// GPUCapacity returns the node's nvidia.com/gpu capacity and allocatable.
func GPUCapacity(n *corev1.Node) (capacity, allocatable int) {
	if q, ok := n.Status.Capacity[ResourceGPU]; ok {
		capacity = int(q.Value())
	}
	if q, ok := n.Status.Allocatable[ResourceGPU]; ok {
		allocatable = int(q.Value())
	}
	return capacity, allocatable
}

// NodeExpectations derives expectations from the node itself: the instance
// type through the catalogue (when one is given and knows it), else the GPU
// Feature Discovery labels, else the advertised capacity.
func NodeExpectations(n *corev1.Node, cat Catalogue) Expectations {
	it := InstanceType(n)
	if cat != nil && it != "" {
		if product, gpus, ok := cat.LookupMachine(it); ok {
			return Expectations{Source: fmt.Sprintf("machine catalogue (%s)", it), GPUProduct: product, GPUCount: gpus, InstanceType: it}
		}
	}
	if p := n.Labels[LabelGFDProduct]; p != "" {
		e := Expectations{Source: "node labels (GPU Feature Discovery)", GPUProduct: p, InstanceType: it}
		if c, err := strconv.Atoi(n.Labels[LabelGFDCount]); err == nil {
			e.GPUCount = c
		}
		if e.GPUCount == 0 {
			e.GPUCount, _ = GPUCapacity(n)
		}
		return e
	}
	c, _ := GPUCapacity(n)
	return Expectations{Source: "node capacity", GPUCount: c, InstanceType: it}
}

// DriverCUDAFromLabels returns the highest CUDA version the node's driver
// supports according to GPU Feature Discovery labels ("12.2"), or "".
func DriverCUDAFromLabels(n *corev1.Node) string {
	// GFD >= 0.15 writes cuda.runtime-version.{major,minor}; older versions
	// cuda.runtime.{major,minor}. Both mean the driver's CUDA version.
	for _, prefix := range []string{"nvidia.com/cuda.runtime-version.", "nvidia.com/cuda.runtime."} {
		maj, min := n.Labels[prefix+"major"], n.Labels[prefix+"minor"]
		if maj != "" && min != "" {
			return maj + "." + min
		}
	}
	return ""
}
