package spec

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the strict decoder: it must return a
// document or an error, never panic or hang. Seeded with the examples and
// the bad-input files.
func FuzzParse(f *testing.F) {
	for _, glob := range []string{"../../examples/*.yaml", "testdata/bad/*.yaml"} {
		files, _ := filepath.Glob(glob)
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := Parse("fuzz.yaml", data)
		if err != nil {
			if doc != nil {
				t.Fatal("document returned with an error")
			}
			return
		}
		for _, e := range append([]string{""}, doc.Environments()...) {
			if _, err := doc.Resolve(e); err != nil {
				return
			}
			doc.Locate(e, "spec.nodePools[0].gpu.driver")
		}
	})
}
