package hclgen

import (
	"testing"

	"github.com/gpuctl/gpuctl/internal/golden"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// BenchmarkGenerate measures generating the Terraform of the scale
// benchmark's 1,000-pool GKE spec (golden.GKEPools).
func BenchmarkGenerate(b *testing.B) {
	doc, err := spec.Parse("bench.yaml", golden.GKEPools(1000))
	if err != nil {
		b.Fatal(err)
	}
	cs, err := doc.Resolve("")
	if err != nil {
		b.Fatal(err)
	}
	defer func(check bool) { checkExprs = check }(checkExprs)
	checkExprs = false // as in gpuctl
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Generate(cs, Options{SpecFile: "bench.yaml"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheck measures validate's check that the Terraform of the same
// spec can be written.
func BenchmarkCheck(b *testing.B) {
	doc, err := spec.Parse("bench.yaml", golden.GKEPools(1000))
	if err != nil {
		b.Fatal(err)
	}
	cs, err := doc.Resolve("")
	if err != nil {
		b.Fatal(err)
	}
	defer func(check bool) { checkExprs = check }(checkExprs)
	checkExprs = false // as in gpuctl
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := Check(cs); err != nil {
			b.Fatal(err)
		}
	}
}
