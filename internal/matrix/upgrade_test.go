package matrix

import (
	"testing"

	"github.com/gpuctl/gpuctl/internal/spec"
)

func TestPoolUpgrade(t *testing.T) {
	mu := func(v int, pct bool) *spec.Rollout {
		return &spec.Rollout{MaxUnavailable: &spec.IntOrPercent{Value: v, Percent: pct}}
	}
	for _, c := range []struct {
		name     string
		provider string
		pool     spec.NodePool
		want     Upgrade
		// nodes, unavailable and parallel for that many nodes
		nodes, unavailable, parallel int
	}{
		{"GKE training default", "gke", spec.NodePool{Role: spec.RoleTraining}, Upgrade{MaxUnavailable: 1}, 12, 1, 1},
		{"GKE inference default", "gke", spec.NodePool{Role: spec.RoleInference}, Upgrade{MaxSurge: 1}, 8, 0, 1},
		{"GKE training 2", "gke", spec.NodePool{Role: spec.RoleTraining, Rollout: mu(2, false)}, Upgrade{MaxUnavailable: 2, FromSpec: true}, 12, 2, 2},
		{"GKE 25% of max 12", "gke", spec.NodePool{Role: spec.RoleInference, Autoscaling: spec.Autoscaling{Max: 12}, Rollout: mu(25, true)}, Upgrade{MaxSurge: 1, MaxUnavailable: 3, FromSpec: true}, 12, 3, 4},
		{"EKS default", "eks", spec.NodePool{}, Upgrade{MaxUnavailable: 1}, 10, 1, 1},
		{"EKS percentage", "eks", spec.NodePool{Rollout: mu(25, true)}, Upgrade{MaxUnavailablePercent: 25, FromSpec: true}, 10, 2, 2},
		{"EKS percentage capped at 100 nodes", "eks", spec.NodePool{Rollout: mu(50, true)}, Upgrade{MaxUnavailablePercent: 50, FromSpec: true}, 400, 100, 100},
		{"EKS count capped at 100", "eks", spec.NodePool{Rollout: mu(150, false)}, Upgrade{MaxUnavailable: 100, FromSpec: true}, 400, 100, 100},
	} {
		got := PoolUpgrade(c.provider, &c.pool)
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
		if u, p := got.Unavailable(c.nodes), got.Parallel(c.nodes); u != c.unavailable || p != c.parallel {
			t.Errorf("%s: %d nodes: unavailable %d, parallel %d; want %d, %d", c.name, c.nodes, u, p, c.unavailable, c.parallel)
		}
	}
}
