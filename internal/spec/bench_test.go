package spec

import (
	"os"
	"testing"
)

// BenchmarkParse measures strict decoding of the shipped example (bytes/op
// and allocs/op with -benchmem).
func BenchmarkParse(b *testing.B) {
	data, err := os.ReadFile("../../examples/gke-h100-l4.yaml")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		if _, err := Parse("bench.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkResolve measures resolving an environment overlay.
func BenchmarkResolve(b *testing.B) {
	data, err := os.ReadFile("../../examples/gke-h100-l4.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		doc, err := Parse("bench.yaml", data)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := doc.Resolve("dev"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParsePools measures decoding the scale benchmark's 1,000-pool
// GKE spec (bench/genspec); most of it is the YAML library's.
func BenchmarkParsePools(b *testing.B) {
	data := gkePools(1000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Parse("bench.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}
