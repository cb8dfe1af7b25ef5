package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkReport runs `gpuctl report --out` in process over N copies of
// the signed H100 record fixture (internal/accept/testdata/records), each at
// DIR/node-I/record.dsse.json as `accept --out` writes them. The hostile
// suite runs the same 500-record case as a process under its wall bound.
func BenchmarkReport(b *testing.B) {
	rec, err := os.ReadFile(filepath.Join("..", "accept", "testdata", "records", "h100-pass.dsse.json"))
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{50, 500} {
		dir := b.TempDir()
		args := []string{"report", "--out", filepath.Join(dir, "page.html")}
		for i := 0; i < n; i++ {
			file := filepath.Join(dir, fmt.Sprintf("node-%d", i), "record.dsse.json")
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(file, rec, 0o644); err != nil {
				b.Fatal(err)
			}
			args = append(args, file)
		}
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				streams, _, _, _ := TestStreams()
				if code := Run(context.Background(), args, streams); code != ExitOK {
					b.Fatalf("exit %d", code)
				}
			}
		})
	}
}
