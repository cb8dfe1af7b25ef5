package spec

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/parser"
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
			if docs, ok := libraryDocuments(data); ok && docs < 2 && strings.Contains(err.Error(), "more than one YAML document") {
				t.Fatalf("refused as several documents, the library reads %d: %v", docs, err)
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

// libraryDocuments is the number of documents with a body the YAML library
// reads in data; ok is false when it does not parse.
func libraryDocuments(data []byte) (int, bool) {
	f, err := parser.ParseBytes(bytes.TrimPrefix(data, bom), 0)
	if err != nil {
		return 0, false
	}
	n := 0
	for _, d := range f.Docs {
		if d != nil && d.Body != nil {
			n++
		}
	}
	return n, true
}
