// Package spectest holds clean cluster specs that tests change: each judges
// clean (info at most) through the validator and the document pipeline, so a
// finding after a change is the change's. Only tests (and the rule case
// table, internal/rules/rulecases) import it.
package spectest

import "github.com/gpuctl/gpuctl/internal/spec"

// EKS is a clean EKS spec: one L4 inference pool on the AL2023 NVIDIA AMI
// with NVIDIA's Helm device plugin (version pinned) and the usual tags, sized
// by hand (addons.autoscaler none).
func EKS() *spec.ClusterSpec {
	return &spec.ClusterSpec{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: "t"},
		Spec: spec.Spec{Provider: "eks", Region: "us-east-1", ClusterName: "ml", KubernetesVersion: "1.34", CUDA: "12.8",
			Tags:   map[string]string{"cost-center": "c", "team": "t", "workload-type": "w"},
			Addons: spec.Addons{DevicePlugin: spec.DevicePlugin{Provider: "helm", Version: "0.20.0"}, Autoscaler: spec.AutoscalerNone},
			NodePools: []spec.NodePool{{Name: "pool", Role: "inference", MachineType: "g6.xlarge", OSImage: "AL2023_x86_64_NVIDIA",
				Capacity: "on-demand", Autoscaling: spec.Autoscaling{Max: 4},
				Taints: []spec.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}}}}}}
}

// GKE is a clean GKE spec: one L4 inference pool on COS with GKE's driver
// and device plugin, the GPU taint and the usual tags.
func GKE() *spec.ClusterSpec {
	return &spec.ClusterSpec{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: "t"},
		Spec: spec.Spec{Provider: "gke", Region: "us-central1", ClusterName: "ml", KubernetesVersion: "1.35", CUDA: "12.4",
			Tags:   map[string]string{"cost-center": "c", "team": "t", "workload-type": "w"},
			Addons: spec.Addons{DevicePlugin: spec.DevicePlugin{Provider: "gke-managed"}},
			NodePools: []spec.NodePool{{Name: "pool", Role: "inference", MachineType: "g2-standard-8", OSImage: "COS_CONTAINERD",
				GPU: spec.GPU{Driver: "LATEST"}, Capacity: "on-demand", Autoscaling: spec.Autoscaling{Max: 4},
				Taints: []spec.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}}}}}}
}

// MinimalEKS is a clean EKS spec: one L4 inference pool on the AL2023
// NVIDIA AMI with NVIDIA's Helm device plugin, sized by hand
// (addons.autoscaler none).
func MinimalEKS() *spec.ClusterSpec {
	return &spec.ClusterSpec{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: "t"},
		Spec: spec.Spec{Provider: "eks", Region: "us-east-1", ClusterName: "ml", KubernetesVersion: "1.34", CUDA: "12.8",
			Addons: spec.Addons{DevicePlugin: spec.DevicePlugin{Provider: "helm"}, Autoscaler: spec.AutoscalerNone},
			NodePools: []spec.NodePool{{Name: "pool", Role: "inference", MachineType: "g6.xlarge", OSImage: "AL2023_x86_64_NVIDIA",
				Capacity: "on-demand", Autoscaling: spec.Autoscaling{Max: 4},
				Taints: []spec.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}}}}}}
}

// MinimalGKE is a clean GKE spec: one L4 inference pool on COS with GKE's
// driver and device plugin, and no taint (GKE adds its GPU taint itself).
func MinimalGKE() *spec.ClusterSpec {
	return &spec.ClusterSpec{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: "t"},
		Spec: spec.Spec{Provider: "gke", Region: "us-central1", ClusterName: "ml", KubernetesVersion: "1.35", CUDA: "12.4",
			NodePools: []spec.NodePool{{Name: "pool", Role: "inference", MachineType: "g2-standard-8", OSImage: "COS_CONTAINERD",
				GPU: spec.GPU{Driver: "LATEST"}, Capacity: "on-demand", Autoscaling: spec.Autoscaling{Max: 4}}}}}
}
