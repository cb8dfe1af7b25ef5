package helmgen

import (
	"fmt"

	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Resource names the device plugins advertise.
const (
	ResourceGPU       = "nvidia.com/gpu"
	ResourceGPUShared = "nvidia.com/gpu.shared"
)

// PluginConfig is one named config of NVIDIA's device plugin (the file
// format of api/config/v1; only the fields gpuctl sets). Source:
// https://github.com/NVIDIA/k8s-device-plugin/tree/main/api/config/v1
type PluginConfig struct {
	// Version must be v1.
	Version string        `json:"version"`
	Flags   PluginFlags   `json:"flags"`
	Sharing *PluginShared `json:"sharing,omitempty"`
}

// PluginFlags are the config's flags.
type PluginFlags struct {
	// MIGStrategy is none, single or mixed.
	MIGStrategy string `json:"migStrategy"`
}

// PluginShared is the config's sharing section: time-slicing or MPS.
type PluginShared struct {
	TimeSlicing *ReplicatedResources `json:"timeSlicing,omitempty"`
	MPS         *ReplicatedResources `json:"mps,omitempty"`
}

// ReplicatedResources is sharing.timeSlicing or sharing.mps.
type ReplicatedResources struct {
	// RenameByDefault advertises shared resources as <name>.shared.
	RenameByDefault bool `json:"renameByDefault,omitempty"`
	// FailRequestsGreaterThanOne rejects pods asking for more than one
	// replica (a share is not a GPU).
	FailRequestsGreaterThanOne bool                 `json:"failRequestsGreaterThanOne,omitempty"`
	Resources                  []ReplicatedResource `json:"resources"`
}

// ReplicatedResource is one shared resource; Replicas must be at least 2.
type ReplicatedResource struct {
	Name     string `json:"name"`
	Replicas int    `json:"replicas"`
}

// DefaultConfigName is the device plugin config for nodes without the
// nvidia.com/device-plugin.config label.
const DefaultConfigName = "default"

// pluginConfig is the named config of pool p for NVIDIA's device plugin.
func pluginConfig(p *spec.NodePool) PluginConfig {
	c := PluginConfig{Version: "v1", Flags: PluginFlags{MIGStrategy: p.MIGStrategy()}}
	rr := &ReplicatedResources{
		RenameByDefault:            p.GPU.Sharing.RenameByDefault,
		FailRequestsGreaterThanOne: true,
		Resources:                  []ReplicatedResource{{Name: ResourceGPU, Replicas: p.GPU.Sharing.Replicas}},
	}
	switch p.SharingStrategy() {
	case spec.SharingTimeSlicing:
		c.Sharing = &PluginShared{TimeSlicing: rr}
	case spec.SharingMPS:
		c.Sharing = &PluginShared{MPS: rr}
	}
	return c
}

// Advertised is what a pool's device plugin advertises on each node.
type Advertised struct {
	// Resource is the extended resource name (nvidia.com/gpu,
	// nvidia.com/gpu.shared, nvidia.com/mig-1g.10gb); empty when no plugin
	// runs on the pool.
	Resource string
	// PerNode is how many of Resource one node advertises.
	PerNode int
}

// AdvertisedBy returns what pool p's device plugin advertises per node.
// GPUs per node and MIG instance counts come from package matrix
// (matrix.PoolGPUsPerNode, matrix.PoolGPU, matrix.MIGInstances). Errors: GPUs
// per node unknown, or a MIG profile whose instance count gpuctl does not
// know.
func AdvertisedBy(s *spec.Spec, p *spec.NodePool) (Advertised, error) {
	gpus, ok := matrix.PoolGPUsPerNode(s.Provider, p)
	if !ok {
		return Advertised{}, fmt.Errorf("pool %s: GPUs per node unknown; set gpu.count", p.Name)
	}
	plugin := s.DevicePluginFor(p)
	if plugin == spec.DevicePluginNone {
		return Advertised{}, nil
	}
	nvidia := s.NVIDIAPlugin(p)
	switch p.SharingStrategy() {
	case spec.SharingTimeSlicing, spec.SharingMPS:
		if plugin == spec.DevicePluginBottlerocket && !(nvidia && p.GPU.Sharing.RenameByDefault) {
			return Advertised{ResourceGPU, gpus}, nil // sharing is not configured through gpuctl there
		}
		n, ok := mulQuota(gpus, p.GPU.Sharing.Replicas)
		if !ok {
			return Advertised{}, fmt.Errorf("pool %s: %d GPUs times %d replicas overflows a quota", p.Name, gpus, p.GPU.Sharing.Replicas)
		}
		if nvidia && p.GPU.Sharing.RenameByDefault {
			return Advertised{ResourceGPUShared, n}, nil
		}
		return Advertised{ResourceGPU, n}, nil
	case spec.SharingMIG:
		g, ok := matrix.PoolGPU(s.Provider, p)
		if !ok {
			return Advertised{}, fmt.Errorf("pool %s: MIG instances per GPU unknown: the pool's GPU is not in the matrix", p.Name)
		}
		n, err := matrix.MIGInstances(g, p.GPU.Sharing.MIGProfile)
		if err != nil {
			return Advertised{}, fmt.Errorf("pool %s: %w", p.Name, err)
		}
		if nvidia && p.MIGStrategy() == spec.MIGStrategyMixed {
			return Advertised{"nvidia.com/mig-" + p.GPU.Sharing.MIGProfile, gpus * n}, nil
		}
		return Advertised{ResourceGPU, gpus * n}, nil
	}
	return Advertised{ResourceGPU, gpus}, nil
}

// maxQuota is the largest device count gpuctl writes into a Kueue or
// Kubernetes quota: far above any real cluster, and small enough that
// sums of a few of them stay far from overflowing an int64.
const maxQuota = 1 << 53

// mulQuota is a*b for non-negative device counts; ok is false when either is
// negative or the product passes maxQuota (a spec with absurd numbers, which
// validate refuses first).
func mulQuota(a, b int) (int, bool) {
	if a < 0 || b < 0 {
		return 0, false
	}
	if a != 0 && b > maxQuota/a {
		return 0, false
	}
	return a * b, true
}
