package spec

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the strict decoder: it must return a
// document or an error, never panic or hang, and a document it returns
// holds no string with a control character. Seeded with the examples and
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
		if err := noControlText(reflect.ValueOf(doc.Spec), "spec"); err != nil {
			t.Fatalf("a control character was loaded: %v", err)
		}
		for _, e := range append([]string{""}, doc.Environments()...) {
			if _, err := doc.Resolve(e); err != nil {
				return
			}
			doc.Locate(e, "spec.nodePools[0].gpu.driver")
		}
	})
}
