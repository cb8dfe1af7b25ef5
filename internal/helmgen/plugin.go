package helmgen

import (
	"fmt"
	"strconv"
	"strings"

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

// GPUsPerNode returns the GPUs of a machine type from the catalogue of
// package matrix (false for unknown types and N1, whose GPUs are attached
// and must be counted in the spec). A variable so that tests can substitute
// a fixed catalogue.
var GPUsPerNode = func(provider, machineType string) (int, bool) {
	m, ok := matrix.LookupMachine(provider, machineType)
	return m.GPUCount, ok && m.GPUCount > 0
}

// AdvertisedBy returns what pool p's device plugin advertises per node.
// Errors: GPUs per node unknown, or a MIG profile whose instance count
// gpuctl does not know.
func AdvertisedBy(s *spec.Spec, p *spec.NodePool) (Advertised, error) {
	gpus := p.GPU.Count
	if gpus == 0 {
		if mts := p.MachineTypes(); len(mts) > 0 {
			gpus, _ = GPUsPerNode(s.Provider, mts[0])
		}
	}
	if gpus <= 0 {
		return Advertised{}, fmt.Errorf("pool %s: GPUs per node unknown; set gpu.count", p.Name)
	}
	plugin := s.DevicePluginFor(p)
	if plugin == spec.DevicePluginNone {
		return Advertised{}, nil
	}
	nvidia := s.NVIDIAPlugin(p)
	switch p.SharingStrategy() {
	case spec.SharingTimeSlicing, spec.SharingMPS:
		if nvidia && p.GPU.Sharing.RenameByDefault {
			return Advertised{ResourceGPUShared, gpus * p.GPU.Sharing.Replicas}, nil
		}
		if plugin == spec.DevicePluginBottlerocket {
			return Advertised{ResourceGPU, gpus}, nil // sharing is not configured through gpuctl there
		}
		return Advertised{ResourceGPU, gpus * p.GPU.Sharing.Replicas}, nil
	case spec.SharingMIG:
		n, err := MIGInstances(p.GPU.Type, p.GPU.Sharing.MIGProfile)
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

// MIGInstances returns how many instances of a MIG profile fit on one GPU
// when every GPU is partitioned into that profile alone ("all-<profile>").
// Profiles name compute slices and memory ("3g.40gb"); "+me" profiles
// (media extensions) fit once. Seven-slice GPUs (A100, H100, H200, B200)
// hold 7 x 1g, 3 x 2g, 2 x 3g, 1 x 4g, 1 x 7g, and 4 x a 1g profile with twice
// the smallest 1g memory; four-slice GPUs (A30, RTX PRO 6000) hold 4 x 1g,
// 2 x 2g, 1 x 4g. Source:
// https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html
func MIGInstances(gpuType, profile string) (int, error) {
	if strings.HasSuffix(profile, "+me") {
		return 1, nil
	}
	if n, ok := fourSliceProfiles[profile]; ok {
		return n, nil
	}
	g, memStr, ok := strings.Cut(profile, ".")
	slices, err := strconv.Atoi(strings.TrimSuffix(g, "g"))
	if !ok || err != nil || !strings.HasSuffix(memStr, "gb") {
		return 0, fmt.Errorf("MIG profile %q: want <N>g.<M>gb", profile)
	}
	mem, err := strconv.Atoi(strings.TrimSuffix(memStr, "gb"))
	if err != nil {
		return 0, fmt.Errorf("MIG profile %q: want <N>g.<M>gb", profile)
	}
	switch slices {
	case 1:
		base, known := smallest1g(gpuType)
		if known && mem >= 2*base-1 {
			return 4, nil
		}
		if !known && doubled1g[profile] {
			return 4, nil
		}
		return 7, nil
	case 2:
		return 3, nil
	case 3:
		return 2, nil
	case 4, 7:
		return 1, nil
	}
	return 0, fmt.Errorf("MIG profile %q: unknown compute slice count %d", profile, slices)
}

// fourSliceProfiles are the profiles of four-slice GPUs (A30-24GB, RTX PRO
// 6000 Blackwell), with their instances per GPU.
var fourSliceProfiles = map[string]int{
	"1g.6gb": 4, "2g.12gb": 2, "4g.24gb": 1, // A30
	"1g.24gb": 4, "2g.48gb": 2, "4g.96gb": 1, // RTX PRO 6000 Blackwell (1g.24gb on H100-94GB is the doubled 1g: 4 too)
}

// doubled1g are 1g profiles with twice the smallest 1g memory of their GPU
// where the profile name alone tells (no other GPU uses it as its smallest).
var doubled1g = map[string]bool{"1g.20gb": true, "1g.35gb": true, "1g.45gb": true, "1g.67gb": true}

// smallest1g returns the smallest 1g profile memory (GB) of a GPU type where
// the name settles it: A100 40GB uses 1g.5gb, so its 1g.10gb is the doubled one.
func smallest1g(gpuType string) (int, bool) {
	if g, ok := matrix.LookupGPU(gpuType); ok {
		min := 0
		for _, prof := range g.MIGProfiles {
			if mem, ok := strings.CutPrefix(prof, "1g."); ok && !strings.HasSuffix(mem, "+me") {
				if n, err := strconv.Atoi(strings.TrimSuffix(mem, "gb")); err == nil && (min == 0 || n < min) {
					min = n
				}
			}
		}
		if min > 0 {
			return min, true
		}
	}
	t := strings.ToLower(gpuType)
	switch {
	case t == "nvidia-tesla-a100" || strings.Contains(t, "a100-40") || t == "a100-40gb":
		return 5, true
	case strings.Contains(t, "a100-80") || t == "nvidia-a100-80gb" || strings.Contains(t, "h100-80") || t == "nvidia-h100-80gb" || t == "nvidia-h100-mega-80gb":
		return 10, true
	}
	return 0, false
}
