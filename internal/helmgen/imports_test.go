package helmgen

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportBoundaries holds the generators to the house layering: they
// import only spec and matrix among gpuctl's packages, and nothing that
// prints, exits or reads flags and environment.
func TestImportBoundaries(t *testing.T) {
	forbidden := []string{"github.com/spf13/", "os/exec", "github.com/gpuctl/gpuctl/internal/cli"}
	allowedOwn := map[string]bool{"github.com/gpuctl/gpuctl/internal/spec": true, "github.com/gpuctl/gpuctl/internal/matrix": true}
	for _, dir := range []string{".", "../hclgen"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range af.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				for _, bad := range forbidden {
					if strings.HasPrefix(p, bad) {
						t.Errorf("%s imports %s", f, p)
					}
				}
				if strings.HasPrefix(p, "github.com/gpuctl/gpuctl/") && !allowedOwn[p] {
					t.Errorf("%s imports %s; generators may import only spec and matrix", f, p)
				}
				if p == "os" {
					t.Errorf("%s imports os: generators return values, they do no I/O", f)
				}
			}
		}
	}
}
