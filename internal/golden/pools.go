package golden

import (
	"fmt"
	"strings"
)

// GKEPools returns a valid GKE spec with n L4 inference pools, one per line
// in flow style (about 260 bytes a pool, so 10,000 pools fit the 4 MiB
// limit). The benchmarks and the limit tests use it: it validates without
// errors and generates every layer.
func GKEPools(n int) []byte {
	var b strings.Builder
	b.Grow(300 + 270*n)
	b.WriteString(`apiVersion: gpuctl.dev/v1alpha1
kind: ClusterSpec
metadata: {name: bench}
spec:
  provider: gke
  region: us-central1
  clusterName: bench
  kubernetesVersion: "1.33"
  releaseChannel: EXTENDED
  nodePools:
`)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "    - {name: p%d, role: inference, machineType: g2-standard-24, zones: [us-central1-a], osImage: COS_CONTAINERD, gpu: {type: nvidia-l4, count: 2, driver: LATEST}, autoscaling: {min: 0, max: 2}, taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]}\n", i)
	}
	return []byte(b.String())
}
