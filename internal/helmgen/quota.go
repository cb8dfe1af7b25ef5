package helmgen

import "github.com/gpuctl/gpuctl/internal/spec"

// PoolQuotas returns the GPU capacity of every pool of s as the generated
// Kueue ClusterQueue sizes it (what the advertised resource and
// autoscaling.max give), in pool order. Errors as AdvertisedBy's.
func PoolQuotas(s *spec.Spec) ([]PoolQuota, error) { return poolQuotas(s) }
