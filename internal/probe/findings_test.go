package probe

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// TestFindingCatalogueLoads: the embedded catalogue decodes and passes
// the load checks, and lookups ignore case.
func TestFindingCatalogueLoads(t *testing.T) {
	list, err := loadFindingRules(findingsFS, "findings")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) == 0 || len(FindingRules()) != len(list) {
		t.Fatalf("%d rules loaded, FindingRules has %d", len(list), len(FindingRules()))
	}
	r, ok := LookupFindingRule("XID_Reset")
	if !ok || r.ID != "xid-reset" || r.Severity != diag.SeverityError || r.Room != "dmesg" || len(r.Sources) == 0 {
		t.Fatalf("LookupFindingRule(XID_Reset) = %+v, %v", r, ok)
	}
	if _, ok := LookupFindingRule("no-such-finding"); ok {
		t.Error("LookupFindingRule(no-such-finding) found a rule")
	}
	r.Sources[0] = "changed"
	if again, _ := LookupFindingRule("xid-reset"); again.Sources[0] == "changed" {
		t.Error("LookupFindingRule returns the catalogue's own slice")
	}
}

// TestFindingCatalogueRejects: each broken entry is refused with its file
// and id named.
func TestFindingCatalogueRejects(t *testing.T) {
	const good = "- id: a-rule\n  title: T\n  severity: error\n  severityReason: R\n  summary: S\n  fix: F\n  sources: [https://example.org/x (checked 2026-12-03)]\n"
	for _, tc := range []struct{ name, yaml, other, want string }{
		{"duplicate id across files", good, good, "f/b.yaml: a-rule: also in f/a.yaml"},
		{"unknown severity", strings.Replace(good, "severity: error", "severity: fatal", 1), "", `f/a.yaml: a-rule: severity "fatal"`},
		{"no source", strings.Replace(good, "  sources: [https://example.org/x (checked 2026-12-03)]\n", "", 1), "", "f/a.yaml: a-rule: no source"},
		{"empty title", strings.Replace(good, "title: T", "title: ''", 1), "", "f/a.yaml: a-rule: title is empty"},
		{"empty fix", strings.Replace(good, "fix: F", "fix: ' '", 1), "", "f/a.yaml: a-rule: fix is empty"},
		{"empty summary", strings.Replace(good, "summary: S", "summary: ''", 1), "", "f/a.yaml: a-rule: summary is empty"},
		{"uppercase id", strings.Replace(good, "a-rule", "A-RULE", 1), "", `f/a.yaml: A-RULE: id "A-RULE"`},
		{"also without when", good + "  also: [{severity: info, reason: r}]\n", "", "f/a.yaml: a-rule: also info: no when"},
		{"unknown field", good + "  sevrity: info\n", "", "f/a.yaml"},
		{"not sorted", good + strings.Replace(good, "a-rule", "0-rule", 1), "", "f/a.yaml: 0-rule: not sorted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{"f/a.yaml": {Data: []byte(tc.yaml)}}
			if tc.other != "" {
				fsys["f/b.yaml"] = &fstest.MapFile{Data: []byte(tc.other)}
			}
			_, err := loadFindingRules(fsys, "f")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	if _, err := loadFindingRules(fstest.MapFS{"f/a.yaml": {Data: []byte(good)}}, "f"); err != nil {
		t.Errorf("a good entry: %v", err)
	}
}

// judgeSeverity is the severity each of the judge's methods gives its
// finding.
var judgeSeverity = map[string]diag.Severity{"fail": diag.SeverityError, "unusable": diag.SeverityWarning, "warn": diag.SeverityWarning, "info": diag.SeverityInfo}

// emittedRule is a rule the package's source emits with a literal (or
// constant) ID, and where.
type emittedRule struct {
	rule     string
	severity diag.Severity
	at       string
}

// sourceRules reads internal/probe's non-test files: the rules passed as
// first argument to the judge's fail, unusable, warn, info and add, and
// the Rule of every diag.Finding literal, with their severities. IDs that
// are package-level string constants are resolved; built IDs are not
// returned (outputRules holds those).
func sourceRules(t *testing.T) []emittedRule {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil || len(names) == 0 {
		t.Fatalf("no Go files: %v", err)
	}
	var files []*ast.File
	consts := map[string]string{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		collectStringConsts(f, consts)
	}
	var out []emittedRule
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if r, ok := judgeCallRule(n, consts); ok {
					r.at = fset.Position(n.Pos()).String()
					out = append(out, r)
				}
			case *ast.CompositeLit:
				if r, ok := findingLitRule(n, consts); ok {
					r.at = fset.Position(n.Pos()).String()
					out = append(out, r)
				}
			}
			return true
		})
	}
	return out
}

// collectStringConsts adds the package-level string constants of f.
func collectStringConsts(f *ast.File, consts map[string]string) {
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if i < len(vs.Values) {
					if v, ok := stringValue(vs.Values[i], nil); ok {
						consts[n.Name] = v
					}
				}
			}
		}
	}
}

// stringValue is e's value when e is a string literal or a known constant.
func stringValue(e ast.Expr, consts map[string]string) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			s, err := strconv.Unquote(e.Value)
			return s, err == nil
		}
	case *ast.Ident:
		s, ok := consts[e.Name]
		return s, ok
	}
	return "", false
}

// severityValue is the severity a diag.SeverityX selector names.
func severityValue(e ast.Expr) (diag.Severity, bool) {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	s, ok := map[string]diag.Severity{"SeverityError": diag.SeverityError, "SeverityWarning": diag.SeverityWarning, "SeverityInfo": diag.SeverityInfo}[sel.Sel.Name]
	return s, ok
}

// judgeCallRule reads j.fail("rule", gpu, format, ...) and its kin, and
// j.add("rule", diag.SeverityX, gpu, format, ...).
func judgeCallRule(c *ast.CallExpr, consts map[string]string) (emittedRule, bool) {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok || len(c.Args) < 3 {
		return emittedRule{}, false
	}
	rule, ok := stringValue(c.Args[0], consts)
	if !ok {
		return emittedRule{}, false
	}
	if sel.Sel.Name == "add" {
		sev, ok := severityValue(c.Args[1])
		return emittedRule{rule: rule, severity: sev}, ok
	}
	sev, ok := judgeSeverity[sel.Sel.Name]
	return emittedRule{rule: rule, severity: sev}, ok
}

// findingLitRule reads diag.Finding{Rule: "rule", Severity: diag.SeverityX}.
func findingLitRule(c *ast.CompositeLit, consts map[string]string) (emittedRule, bool) {
	sel, ok := c.Type.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Finding" {
		return emittedRule{}, false
	}
	var r emittedRule
	var hasRule bool
	for _, e := range c.Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		switch kv.Key.(*ast.Ident).Name {
		case "Rule":
			r.rule, hasRule = stringValue(kv.Value, consts)
		case "Severity":
			r.severity, _ = severityValue(kv.Value)
		}
	}
	return r, hasRule
}

// TestFindingRulesInSourceCatalogued: every rule the source emits by name
// is catalogued with the severity the call gives it.
func TestFindingRulesInSourceCatalogued(t *testing.T) {
	emitted := sourceRules(t)
	if len(emitted) < 50 {
		t.Fatalf("only %d rule calls found in the source: the scan is broken", len(emitted))
	}
	for _, e := range emitted {
		r, ok := LookupFindingRule(e.rule)
		switch {
		case !ok:
			t.Errorf("%s: rule %q is not in findings/*.yaml", e.at, e.rule)
		case e.severity == "":
			t.Errorf("%s: rule %q: severity not read", e.at, e.rule)
		case !r.Emits(e.severity):
			t.Errorf("%s: rule %q is emitted as %s; findings/%s.yaml lists %v", e.at, e.rule, e.severity, r.Room, r.Severities())
		}
	}
}

// outputRules parses every file of testdata and the shared corpus, and
// outputs built from real ones for the IDs the code builds (every
// nvidia-smi/NVML failure kind, alone and in a component log; each
// framework check failing), and returns each finding's rule with its
// severities and the first input it came from.
func outputRules(t *testing.T) map[string]map[diag.Severity]string {
	t.Helper()
	seen := map[string]map[diag.Severity]string{}
	note := func(from string, h *Header) {
		for _, f := range h.Findings {
			if seen[f.Rule] == nil {
				seen[f.Rule] = map[diag.Severity]string{}
			}
			if _, ok := seen[f.Rule][f.Severity]; !ok {
				seen[f.Rule][f.Severity] = from
			}
		}
	}
	n := 0
	for _, root := range []string{"testdata", corpusDir} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasSuffix(path, ".md") || strings.HasSuffix(path, ".source") || strings.Contains(filepath.ToSlash(path), "/fuzz/") {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			n++
			if r, err := Parse(KindAuto, data); err == nil {
				note(path, r.Common())
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n < 100 {
		t.Fatalf("only %d outputs read", n)
	}
	for kind, line := range failureSamples {
		note("failure sample "+kind, &ParseNvidiaSMI([]byte(line+"\n")).Header)
		// A component quotes the message after its log prefix, or (the
		// GPU Operator's validator) prints nvidia-smi's own lines.
		note("component log sample "+kind, &ParseComponentLog([]byte("I1203 08:00:00.000000 1 main.go:1] "+line+"\n")).Header)
		note("component log sample "+kind, &ParseComponentLog([]byte("running command nvidia-smi\n"+line+"\n")).Header)
	}
	ok := frameworkOK(t)
	for _, name := range frameworkRequired {
		note("framework "+name+" failing", &ParseFramework([]byte(editCheck(t, ok, name, `{"ok": false}`, true))).Header)
	}
	note("framework init failing", &ParseFramework([]byte(`GPUCTL-FRAMEWORK {"check": "init", "durationMs": 0.0, "error": {"class": "RuntimeError", "message": "CUDA is not available to torch"}, "formatVersion": "gpuctl-framework/v1", "ok": false, "ranks": [], "record": "check", "thresholds": {}, "values": {}}
GPUCTL-FRAMEWORK {"checks": ["init"], "cuda": "12.2", "durationMs": 3.1, "failed": ["init"], "formatVersion": "gpuctl-framework/v1", "ok": false, "record": "summary", "torch": "2.1.0a0+32f93b1"}
`)).Header)
	return seen
}

// failureSamples are nvidia-smi and NVML failure messages as the tools
// print them (smi.go's failure kinds quote each), one per kind.
var failureSamples = map[string]string{
	FailureDriverNotLoaded:       "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.",
	FailureDriverLibraryMismatch: "Failed to initialize NVML: Driver/library version mismatch",
	FailureDeviceHandle:          "Unable to determine the device handle for GPU 0000:3B:00.0: Unknown Error",
	FailureGPULost:               "Unable to determine the device handle for GPU 0000:3B:00.0: GPU is lost.  Reboot the system to recover this GPU",
	FailureNoDevices:             "No devices were found",
	FailureNVMLNotFound:          "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display Driver is properly installed and present in your system.",
	FailureNVMLUnknownError:      "Failed to initialize NVML: Unknown Error",
	FailureNoPermission:          "Failed to initialize NVML: Insufficient Permissions",
	FailureNVMLNotLoadable:       "could not load NVML library: libnvidia-ml.so.1: cannot open shared object file: No such file or directory",
	FailureSMIMissing:            "bash: nvidia-smi: command not found",
}

// TestFindingRulesOfOutputsCatalogued: every finding of every real output
// (and of the built-ID samples) has a catalogued rule with that severity,
// which catches IDs the code builds at run time.
func TestFindingRulesOfOutputsCatalogued(t *testing.T) {
	seen := outputRules(t)
	for kind := range failureSamples {
		// A component that quotes an NVML initialisation failure states
		// a health fact (component-nvml-init-failed), not a failure kind.
		if seen[kind] == nil || (seen["component-"+kind] == nil && !strings.HasPrefix(failureSamples[kind], "Failed to initialize NVML")) {
			t.Errorf("failure sample %s makes no %s and component-%s findings", kind, kind, kind)
		}
	}
	for rule, sevs := range seen {
		r, ok := LookupFindingRule(rule)
		for sev, from := range sevs {
			switch {
			case !ok:
				t.Errorf("%s: rule %q is not in findings/*.yaml", from, rule)
			case !r.Emits(sev):
				t.Errorf("%s: rule %q is reported as %s; findings/%s.yaml lists %v", from, rule, sev, r.Room, r.Severities())
			}
		}
	}
}

// TestFindingCatalogueNotStale: every catalogued rule is emitted by name in
// the source or seen on an output, with each severity it lists.
func TestFindingCatalogueNotStale(t *testing.T) {
	have := map[string][]diag.Severity{}
	for _, e := range sourceRules(t) {
		have[e.rule] = append(have[e.rule], e.severity)
	}
	for rule, sevs := range outputRules(t) {
		for sev := range sevs {
			have[rule] = append(have[rule], sev)
		}
	}
	var stale []string
	for _, r := range FindingRules() {
		for _, c := range r.Severities() {
			if !slices.Contains(have[r.ID], c.Severity) {
				stale = append(stale, r.ID+" ("+string(c.Severity)+", findings/"+r.Room+".yaml)")
			}
		}
	}
	sort.Strings(stale)
	for _, s := range stale {
		t.Errorf("catalogued but never emitted: %s", s)
	}
}
