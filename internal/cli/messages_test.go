package cli

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpuctl/gpuctl/internal/check"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Every finding gpuctl gives on the examples and the real-world specs says
// each thing once: no double spaces, no field path repeated at the start of
// its own message, no clause of five words or more written twice.
func TestMessagesSayItOnce(t *testing.T) {
	var files []string
	for _, pat := range []string{"../../examples/*.yaml", "../../testdata/realworld/*.yaml", "../../internal/*/testdata/*.yaml", "../../internal/*/testdata/*/*.yaml"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("found %d spec files; the globs are wrong", len(files))
	}
	words := regexp.MustCompile(`[a-z0-9.]+`)
	n := 0
	for _, file := range files {
		if filepath.Base(file) == "expected.yaml" {
			continue
		}
		doc, err := spec.Load(file, nil)
		if err != nil {
			continue // the decode errors have their own tests
		}
		res, err := check.Document(doc, check.Options{AsOf: time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, f := range res.Findings {
			for _, text := range []string{f.Message, f.Fix} {
				n++
				if strings.Contains(text, "  ") {
					t.Errorf("%s %s: double space in %q", file, f.Rule, text)
				}
				if f.Path != "" && strings.HasPrefix(text, f.Path+": ") {
					t.Errorf("%s %s: message starts with its path: %q", file, f.Rule, text)
				}
				w := words.FindAllString(strings.ToLower(text), -1)
				seen := map[string]bool{}
				for i := 0; i+5 <= len(w); i++ {
					g := strings.Join(w[i:i+5], " ")
					if seen[g] {
						t.Errorf("%s %s: %q is said twice in %q", file, f.Rule, g, text)
						break
					}
					seen[g] = true
				}
			}
		}
	}
	if n < 100 {
		t.Fatalf("checked %d texts; expected the examples to give more findings", n)
	}
}
