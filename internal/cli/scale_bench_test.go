package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpuctl/gpuctl/internal/golden"
)

// BenchmarkScale runs `gpuctl validate` and `gpuctl generate all --out` in
// process on generated GKE specs of 10 to 10,000 pools (golden.GKEPools),
// which validate without errors. bench/scale.sh measures the same commands
// as processes, with peak RSS; docs/performance.md has both.
func BenchmarkScale(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 10000} {
		dir := b.TempDir()
		file := filepath.Join(dir, fmt.Sprintf("p%d.yaml", n))
		if err := os.WriteFile(file, golden.GKEPools(n), 0o644); err != nil {
			b.Fatal(err)
		}
		for _, cmd := range [][]string{
			{"validate", "--as-of", "2026-11-29", file},
			{"generate", "all", "--as-of", "2026-11-29", file, "--out", filepath.Join(dir, "out")},
		} {
			b.Run(fmt.Sprintf("%s/pools=%d", cmd[0], n), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					streams, _, _, _ := TestStreams()
					if code := Run(context.Background(), cmd, streams); code != ExitOK {
						b.Fatalf("%v: exit %d", cmd, code)
					}
				}
			})
		}
	}
}
