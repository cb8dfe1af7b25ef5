package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLayering holds the house rules on imports and side effects: below
// internal/cli nothing imports cobra or viper, prints to the process's
// streams, reads the environment or exits; spec and probe import no gpuctl
// package; matrix imports only spec; generators import only spec and matrix;
// accept imports only probe, matrix and spec.
func TestLayering(t *testing.T) {
	const mod = "github.com/gpuctl/gpuctl/internal/"
	allowed := map[string][]string{
		"diag":    {},
		"spec":    {"diag"},
		"probe":   {"diag"},
		"matrix":  {"spec", "diag"},
		"hclgen":  {"spec", "matrix", "diag"},
		"helmgen": {"spec", "matrix", "diag"},
		"accept":  {"probe", "matrix", "spec", "diag"},
	}
	forbiddenImports := []string{"github.com/spf13/cobra", "github.com/spf13/viper"}
	forbiddenCalls := map[string]bool{"os.Exit": true, "os.Stdout": true, "os.Stderr": true, "os.Getenv": true, "os.LookupEnv": true, "os.Environ": true}

	for pkg, ok := range allowed {
		files, _ := filepath.Glob(filepath.Join("..", pkg, "*.go"))
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, file, nil, parser.ImportsOnly|parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				path := strings.Trim(imp.Path.Value, `"`)
				for _, bad := range forbiddenImports {
					if strings.HasPrefix(path, bad) {
						t.Errorf("%s imports %s (only internal/cli may)", file, path)
					}
				}
				if strings.HasPrefix(path, mod) {
					dep := strings.SplitN(strings.TrimPrefix(path, mod), "/", 2)[0]
					if dep == pkg {
						continue
					}
					if !contains(ok, dep) {
						t.Errorf("%s imports internal/%s; %s may import only %v", file, dep, pkg, ok)
					}
				}
			}
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			full, err := parser.ParseFile(fset, file, src, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(full, func(n ast.Node) bool {
				sel, isSel := n.(*ast.SelectorExpr)
				if !isSel {
					return true
				}
				if id, isID := sel.X.(*ast.Ident); isID && forbiddenCalls[id.Name+"."+sel.Sel.Name] {
					t.Errorf("%s: %s uses %s.%s (only internal/cli touches the process)", fset.Position(sel.Pos()), pkg, id.Name, sel.Sel.Name)
				}
				return true
			})
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
