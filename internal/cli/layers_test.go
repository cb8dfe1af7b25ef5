package cli

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// modInternal is the import path of the tree the layering rules hold.
const modInternal = "github.com/gpuctl/gpuctl/internal/"

// layerRule is what one package under internal/ may do.
type layerRule struct {
	// imports are the gpuctl packages it may import (paths relative to
	// internal/); "*" allows any.
	imports []string
	// quiet packages never touch the process: no os.Stdout/os.Stderr, no
	// fmt.Print*/log.*/slog's default logger, no os.Exit, no environment,
	// no cobra/viper; they return values and errors to internal/cli.
	quiet bool
	// noCluster forbids k8s.io/ imports (probe knows no cluster).
	noCluster bool
	// noOS forbids os and os/exec (the generators do no I/O).
	noOS bool
	// testImports are the gpuctl packages its _test.go files may import
	// besides imports (the shared test harness).
	testImports []string
}

// layerRules encode the layout of the README and the house style: every
// package under internal/ has an entry (TestLayering fails on one without).
var layerRules = map[string]layerRule{
	"cli": {imports: []string{"*"}},
	// render draws pure models (diag's findings, the record, the report
	// model): no I/O of its own, no Kubernetes client.
	"cli/render": {imports: []string{"diag", "record", "report"}, quiet: true, noCluster: true},
	"diag":       {quiet: true},
	"spec":       {imports: []string{"diag", "safefs"}, quiet: true},
	// spectest holds clean specs that tests change; only tests and the
	// rule case table import it.
	"spec/spectest": {imports: []string{"spec"}, quiet: true, noOS: true},
	"probe":         {imports: []string{"diag"}, quiet: true, noCluster: true, testImports: []string{"probe/nvmlmock"}},
	// nvmlmock sets up go-nvml's mock servers for the NVML tests; only
	// tests import it.
	"probe/nvmlmock": {quiet: true, noCluster: true, noOS: true},
	"matrix":         {imports: []string{"spec", "diag"}, quiet: true},
	// rules judge a spec against the facts; facts never call rules.
	"rules": {imports: []string{"spec", "matrix", "diag"}, quiet: true, noOS: true, testImports: []string{"rules/rulecases", "spec/spectest"}},
	// rulecases is the rule case table that rules' and check's tests both
	// run; only tests import it.
	"rules/rulecases": {imports: []string{"spec", "spec/spectest", "rules", "diag"}, quiet: true, noOS: true},
	// record is the signed acceptance record's schema, reading and
	// verifying: a leaf beside diag, with no Kubernetes client.
	"record": {imports: []string{"diag", "safefs"}, quiet: true, noCluster: true},
	"hclgen": {imports: []string{"spec", "matrix", "diag"}, quiet: true, noOS: true, testImports: []string{"golden", "rules"}},
	// fabric is the pod side of a GPU fabric (EFA, GPUDirect-TCPX/TCPXO,
	// RDMA): what accept's rank pods and generate's NCCL objects share.
	"fabric": {imports: []string{"spec", "matrix", "diag"}, quiet: true, noOS: true},
	// helmgen writes the acceptance sweep's RBAC with accept's own
	// builder (the one `accept --dry-run --bind` prints), so the two
	// cannot drift.
	"helmgen": {imports: []string{"spec", "matrix", "fabric", "accept", "diag"}, quiet: true, noOS: true, testImports: []string{"golden"}},
	"accept":  {imports: []string{"probe", "matrix", "fabric", "spec", "record", "safefs", "diag"}, quiet: true, testImports: []string{"golden"}},
	// check is the document pipeline over the generators; it loads nothing.
	"check": {imports: []string{"spec", "matrix", "rules", "hclgen", "helmgen", "diag"}, quiet: true, noOS: true, testImports: []string{"rules/rulecases"}},
	// plan reads the --out tree through safefs (never following a link)
	// and the cluster through kubernetes.Interface, never os.
	"plan": {imports: []string{"check", "spec", "matrix", "helmgen", "fabric", "accept", "safefs", "hclshape", "diag"}, quiet: true, noOS: true},
	// importer reads existing Terraform, blueprints and Karpenter YAML
	// into a spec; it reads files and never prints. Its tests judge and
	// regenerate what it imports.
	"importer": {imports: []string{"spec", "matrix", "safefs", "hclshape", "diag"}, quiet: true, testImports: []string{"check", "hclgen", "helmgen", "rules", "golden"}},
	// report builds gpuctl report's model from records, decoded by
	// record's readers; it reads no file itself and links no Kubernetes.
	"report": {imports: []string{"record", "diag"}, quiet: true, noOS: true, noCluster: true},
	// golden is the generators' test harness (example specs, golden files);
	// only tests import it.
	"golden": {imports: []string{"spec", "matrix", "rules", "diag"}, quiet: true},
	// safefs is the one way to open a file: a leaf every reader imports.
	"safefs": {quiet: true, noCluster: true},
	// hclshape estimates HCL's tokens from bytes before the lexer runs.
	"hclshape": {quiet: true, noCluster: true, noOS: true},
}

// processCalls are the package-level identifiers a quiet package must not
// use, by import path.
var processCalls = map[string]map[string]bool{
	"os": {"Stdout": true, "Stderr": true, "Stdin": true, "Exit": true, "Getenv": true, "LookupEnv": true,
		"Environ": true, "ExpandEnv": true, "Setenv": true, "Unsetenv": true, "Clearenv": true},
	"fmt": {"Print": true, "Printf": true, "Println": true},
	"log": {"Print": true, "Printf": true, "Println": true, "Fatal": true, "Fatalf": true, "Fatalln": true,
		"Panic": true, "Panicf": true, "Panicln": true, "Default": true, "Writer": true},
	"log/slog": {"Debug": true, "Info": true, "Warn": true, "Error": true, "Log": true, "LogAttrs": true,
		"DebugContext": true, "InfoContext": true, "WarnContext": true, "ErrorContext": true, "Default": true},
}

// checkLayering walks root (an internal/ tree), holds every package found
// to rules and returns the problems (sorted; file names relative to root)
// and the packages found. A package is a folder with .go files; testdata
// folders and folders starting with "." or "_" are skipped, as the go tool
// skips them. Finding no Go file at all is a problem: a check that reads
// nothing proves nothing.
func checkLayering(root string, rules map[string]layerRule) (problems, pkgs []string, err error) {
	files := map[string][]string{} // package -> its .go files
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") {
			rel, err := filepath.Rel(root, filepath.Dir(p))
			if err != nil {
				return err
			}
			pkg := filepath.ToSlash(rel)
			files[pkg] = append(files[pkg], p)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if len(files) == 0 {
		return []string{fmt.Sprintf("%s: no Go files found", root)}, nil, nil
	}
	for pkg, fs := range files {
		pkgs = append(pkgs, pkg)
		rule, ok := rules[pkg]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: package has no layering rule", pkg))
			continue
		}
		for _, file := range fs {
			ps, err := checkFile(root, pkg, file, rule)
			if err != nil {
				return nil, nil, err
			}
			problems = append(problems, ps...)
		}
	}
	sort.Strings(problems)
	sort.Strings(pkgs)
	return problems, pkgs, nil
}

// checkFile holds one file to its package's rule. Imports are checked in
// test files too; the process rules (quiet) only in the package's code.
func checkFile(root, pkg, file string, rule layerRule) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	rel, _ := filepath.Rel(root, file)
	rel = filepath.ToSlash(rel)
	test := strings.HasSuffix(file, "_test.go")
	var out []string
	bad := func(pos token.Pos, format string, args ...any) {
		out = append(out, fmt.Sprintf("%s:%d: %s %s", rel, fset.Position(pos).Line, pkg, fmt.Sprintf(format, args...)))
	}
	local := map[string]string{} // import name in this file -> import path
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			return nil, err
		}
		name := path.Base(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		local[name] = p
		switch {
		case strings.HasPrefix(p, modInternal):
			dep := strings.TrimPrefix(p, modInternal)
			if dep != pkg && !slices.Contains(rule.imports, "*") && !slices.Contains(rule.imports, dep) && !(test && slices.Contains(rule.testImports, dep)) {
				bad(imp.Pos(), "imports internal/%s; it may import only %v", dep, rule.imports)
			}
		case rule.quiet && (strings.HasPrefix(p, "github.com/spf13/cobra") || strings.HasPrefix(p, "github.com/spf13/viper")):
			bad(imp.Pos(), "imports %s (only internal/cli may)", p)
		case rule.noCluster && strings.HasPrefix(p, "k8s.io/"):
			bad(imp.Pos(), "imports %s (it knows no cluster)", p)
		case rule.noOS && !test && (p == "os" || p == "os/exec"):
			bad(imp.Pos(), "imports %s (it returns values and does no I/O)", p)
		}
	}
	if !rule.quiet || test {
		return out, nil
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && processCalls[local[id.Name]][x.Sel.Name] {
				bad(x.Pos(), "uses %s.%s (only internal/cli touches the process)", id.Name, x.Sel.Name)
			}
		case *ast.CallExpr:
			if id, ok := x.Fun.(*ast.Ident); ok && (id.Name == "print" || id.Name == "println") {
				bad(x.Pos(), "calls %s (only internal/cli touches the process)", id.Name)
			}
		}
		return true
	})
	return out, nil
}

// TestLayering holds every package under internal/ to its rule, and needs a
// rule for every package and a package for every rule.
func TestLayering(t *testing.T) {
	problems, pkgs, err := checkLayering("..", layerRules)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	for pkg := range layerRules {
		if !slices.Contains(pkgs, pkg) {
			t.Errorf("layering rule for %s, but no Go files in internal/%s", pkg, pkg)
		}
	}
}

// TestLayeringCatches runs the check on a fixture tree with broken rules:
// it must report each, and nothing about the clean package (diag).
func TestLayeringCatches(t *testing.T) {
	problems, pkgs, err := checkLayering(filepath.Join("testdata", "layering"), layerRules)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{ // sorted as strings
		"cli/render/render.go:11: cli/render uses os.Stdout (only internal/cli touches the process)",
		"cli/render/render.go:6: cli/render imports internal/matrix; it may import only [diag record report]",
		"extra: package has no layering rule",
		"hclgen/hclgen.go:4: hclgen imports os (it returns values and does no I/O)",
		"hclgen/hclgen.go:6: hclgen imports internal/accept; it may import only [spec matrix diag]",
		"matrix/matrix.go:10: matrix uses fmt.Println (only internal/cli touches the process)",
		"matrix/matrix.go:12: matrix uses osx.Getenv (only internal/cli touches the process)",
		"matrix/matrix.go:13: matrix uses osx.Exit (only internal/cli touches the process)",
		"matrix/matrix.go:5: matrix imports internal/cli; it may import only [spec diag]",
		"matrix/matrix.go:6: matrix imports github.com/spf13/cobra (only internal/cli may)",
		"matrix/matrix_test.go:5: matrix imports internal/cli/render; it may import only [spec diag]",
		"probe/probe.go:4: probe imports k8s.io/client-go/kubernetes (it knows no cluster)",
		"probe/probe.go:8: probe uses slog.Info (only internal/cli touches the process)",
		"probe/probe.go:9: probe calls println (only internal/cli touches the process)",
	}
	if strings.Join(problems, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(problems, "\n"), strings.Join(want, "\n"))
	}
	if want := []string{"cli/render", "diag", "extra", "hclgen", "matrix", "probe"}; !slices.Equal(pkgs, want) {
		t.Errorf("packages %v, want %v (testdata skipped)", pkgs, want)
	}

	// A tree without Go files is a failure, not a pass.
	problems, _, err = checkLayering(t.TempDir(), layerRules)
	if err != nil || len(problems) != 1 || !strings.HasSuffix(problems[0], "no Go files found") {
		t.Errorf("empty tree: %v, %v", problems, err)
	}
	if _, _, err := checkLayering(filepath.Join("testdata", "no-such-dir"), layerRules); err == nil {
		t.Error("a missing root is not an error")
	}
}
