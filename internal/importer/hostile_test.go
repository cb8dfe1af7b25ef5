package importer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpuctl/gpuctl/internal/check"
	goldenspec "github.com/gpuctl/gpuctl/internal/golden"
	"github.com/gpuctl/gpuctl/internal/safefs"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// sentinel is the stand-in secret: in a file next to the imported folder
// (outside its root) and in the environment.
const sentinel = "GPUCTL_SENTINEL_7f3a9c"

// hostileDir holds the committed hostile cases (testdata/hostile/README.md).
const hostileDir = "testdata/hostile"

// hostileCase is a case folder set up in a temporary directory: dir is the
// folder imported (its own root), next to secret.txt.
func hostileCase(t *testing.T, name string, files map[string]string) string {
	t.Helper()
	t.Setenv("GPUCTL_TEST_SECRET", sentinel)
	top := t.TempDir()
	if err := os.WriteFile(filepath.Join(top, "secret.txt"), []byte(sentinel+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(top, "case")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if name != "" {
		ents, err := os.ReadDir(filepath.Join(hostileDir, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			data, err := os.ReadFile(filepath.Join(hostileDir, name, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			files[e.Name()] = string(data)
		}
	}
	for n, data := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// importHostile imports dir with dir as the root and returns the error;
// it fails the test when the sentinel appears anywhere or the import takes
// longer than 5 s (the hostile corpus holds a case to 2 s in a child
// process on the CI machine; a unit test shares its machine with others).
func importHostile(t *testing.T, dir string, opts Options) error {
	t.Helper()
	opts.Root = dir
	start := time.Now()
	res, err := ImportContext(context.Background(), []string{dir}, opts)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("import took %v", d)
	}
	if err != nil && strings.Contains(err.Error(), sentinel) {
		t.Errorf("the error carries the sentinel: %v", err)
	}
	if res != nil {
		if y := string(res.YAML()); strings.Contains(y, sentinel) {
			t.Errorf("the spec carries the sentinel:\n%s", y)
		}
		for _, u := range res.Unknowns {
			if strings.Contains(res.reason(u), sentinel) {
				t.Errorf("an unknown carries the sentinel: %s", res.reason(u))
			}
		}
	}
	return err
}

// atPosition matches an error at FILE:LINE:COL.
var atPosition = regexp.MustCompile(`^\S+\.(tf|tpl|tfvars):\d+:\d+: `)

func wantRefusal(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("import succeeded, want an error with %q", want)
	}
	msg := err.Error()
	if !strings.Contains(msg, want) {
		t.Errorf("error %q, want it to contain %q", msg, want)
	}
	if !atPosition.MatchString(msg) {
		t.Errorf("error %q is not at FILE:LINE:COL", msg)
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error %q spans lines", msg)
	}
}

// TestHostileTerraform imports each committed case and wants its refusal.
func TestHostileTerraform(t *testing.T) {
	cases := []struct{ name, want, at string }{
		{"environ-label", `file(): argument 1: "/proc/self/environ" is outside the folder gpuctl reads`, "main.tf:7:"},
		{"regex-driver", `file(): argument 1: "/proc/self/environ" is outside the folder gpuctl reads`, "main.tf:12:"},
		{"dotdot-escape", `file(): argument 1: "../secret.txt" is outside the folder gpuctl reads`, "main.tf:7:"},
		{"abs-path", `templatefile(): argument 1: "/etc/passwd" is outside the folder gpuctl reads`, "main.tf:7:"},
		{"fileexists-abs", `fileexists(): argument 1: "/etc/passwd" is outside`, "main.tf:7:"},
		{"hash-outside", `filesha256(): argument 1: "../secret.txt" is outside`, "main.tf:7:"},
		{"file-of-file", `file(): argument 1: "../secret.txt" is outside`, "main.tf:7:"},
		{"template-self", `templatefile(): argument 1: "self.tpl" includes itself (self.tpl -> self.tpl)`, "self.tpl:1:"},
		{"template-chain", `templatefile(): argument 1: "a.tpl" includes itself (a.tpl -> b.tpl -> a.tpl)`, "b.tpl:1:"},
		{"count-1e9", "count of more than 10000 instances (MaxInstances)", "main.tf:5:14"},
		{"count-1e18", "count of more than 10000 instances (MaxInstances)", "main.tf:5:14"},
		{"setproduct", "setproduct(): a collection of more than 100000 elements (MaxCollection)", "main.tf:5:"},
		{"nested-for", "(MaxEvalSteps)", "main.tf:"},
		{"format-width", "format(): a string of more than 1048576 bytes (MaxStringBytes)", "main.tf:7:"},
		{"yaml-laughs", "yamldecode(): ", "main.tf:7:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := hostileCase(t, c.name, map[string]string{})
			err := importHostile(t, dir, Options{})
			wantRefusal(t, err, c.want)
			if err != nil && !strings.Contains(err.Error(), c.at) {
				t.Errorf("error %q, want it at %s", err, c.at)
			}
		})
	}
}

// TestHostileLinks: a .tfvars file and a module folder that are links to
// outside the root are not read; the tfvars is refused with its path, the
// module is listed as skipped, a file() through its link is refused.
func TestHostileLinks(t *testing.T) {
	t.Run("tfvars", func(t *testing.T) {
		dir := hostileCase(t, "symlink-tfvars", map[string]string{})
		outside := filepath.Join(filepath.Dir(dir), "secret.tfvars")
		if err := os.WriteFile(outside, []byte(`team = "`+sentinel+`"`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../secret.tfvars", filepath.Join(dir, "terraform.tfvars")); err != nil {
			t.Fatal(err)
		}
		err := importHostile(t, dir, Options{})
		if err == nil || !errors.Is(err, safefs.ErrOutside) || !strings.Contains(err.Error(), filepath.Join(dir, "terraform.tfvars")) {
			t.Fatalf("error %v, want terraform.tfvars refused as outside the root", err)
		}
	})
	t.Run("module", func(t *testing.T) {
		dir := hostileCase(t, "symlink-module", map[string]string{})
		outside := filepath.Join(filepath.Dir(dir), "mod")
		if err := os.MkdirAll(outside, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(outside, "secret.tf"), []byte(`# `+sentinel+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../mod", filepath.Join(dir, "mod")); err != nil {
			t.Fatal(err)
		}
		wantRefusal(t, importHostile(t, dir, Options{}), `file(): argument 1: "mod/secret.tf" is outside the folder gpuctl reads`)
		// Without the file(): the module is skipped, never read.
		main := filepath.Join(dir, "main.tf")
		data, _ := os.ReadFile(main)
		if err := os.WriteFile(main, []byte(strings.Replace(string(data), `file("mod/secret.tf")`, `"ml"`, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := Import([]string{dir}, Options{Root: dir})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, s := range res.Skipped {
			if s.What == "module.m" && strings.Contains(s.Reason, "a local module") {
				found = true
			}
		}
		if !found {
			t.Errorf("module.m not skipped as a local module: %+v", res.Skipped)
		}
	})
	t.Run("module outside by name", func(t *testing.T) {
		dir := hostileCase(t, "", map[string]string{"main.tf": hostilePool(`{ team = "ml" }`) + "module \"m\" {\n  source = \"../mod\"\n}\n"})
		res, err := Import([]string{dir}, Options{Root: dir})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range res.Skipped {
			if s.What == "module.m" && strings.Contains(s.Reason, "outside the folder gpuctl reads") {
				return
			}
		}
		t.Errorf("module.m not skipped as outside the root: %+v", res.Skipped)
	})
}

// TestHostileVarFile: --var-file is read as the user named it, through
// safefs: a FIFO is refused by its mode.
func TestHostileVarFile(t *testing.T) {
	dir := hostileCase(t, "symlink-tfvars", map[string]string{})
	fifo := filepath.Join(filepath.Dir(dir), "vars.tfvars")
	if err := mkfifo(fifo); err != nil {
		t.Skip("no FIFO here:", err)
	}
	err := importHostile(t, dir, Options{VarArgs: []VarArg{{File: fifo}}})
	if !errors.Is(err, safefs.ErrNotRegular) {
		t.Fatalf("error %v, want the FIFO refused", err)
	}
}

// TestHostileContentNotQuoted: an expression that fails on a file's content
// (inside the root) is unknown with HCL's summary and position, never the
// content.
func TestHostileContentNotQuoted(t *testing.T) {
	dir := hostileCase(t, "tonumber-content", map[string]string{})
	res, err := Import([]string{dir}, Options{Root: dir})
	if err != nil && strings.Contains(err.Error(), "INSIDE-CONTENT-77") {
		t.Fatalf("error quotes the file: %v", err)
	}
	if res == nil {
		t.Fatalf("no result: %v", err)
	}
	all := string(res.YAML())
	for _, s := range res.Skipped {
		all += s.Reason
	}
	if strings.Contains(all, "INSIDE-CONTENT-77") {
		t.Fatalf("the import quotes the file:\n%s", all)
	}
	if !strings.Contains(all, "an expression gpuctl cannot evaluate (Error in function call tonumber() at") || !strings.Contains(all, "main.tf:5:") {
		t.Errorf("the reason does not say what failed where:\n%s", all)
	}
}

// hostilePool is a GKE GPU pool whose node labels are labels.
func hostilePool(labels string) string {
	return `resource "google_container_node_pool" "gpu" {
  name     = "gpu"
  cluster  = "c"
  location = "us-central1-a"
  node_config {
    machine_type = "g2-standard-8"
    labels       = ` + labels + `
    guest_accelerator {
      type  = "nvidia-l4"
      count = 1
    }
  }
}
`
}

// TestHostileGenerated: the large cases, generated.
// numbers is "0,1,...,n-1".
func numbers(n int) string {
	xs := make([]string, n)
	for i := range xs {
		xs[i] = strconv.Itoa(i)
	}
	return strings.Join(xs, ",")
}

func TestHostileGenerated(t *testing.T) {
	parens := strings.Repeat("(", 100_000) + "1" + strings.Repeat(")", 100_000)
	brackets := strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000)
	dynamic := func(n int) string {
		return "resource \"google_compute_instance\" \"x\" {\n" + strings.Repeat("dynamic \"x\" {\ncontent {\n", n) + strings.Repeat("}\n}\n", n) + "}\n"
	}
	var doubling strings.Builder
	doubling.WriteString("locals {\n  s0 = \"xxxxxxxxxxxxxxxx\"\n")
	for i := 1; i <= 35; i++ {
		fmt.Fprintf(&doubling, "  s%d = \"${local.s%d}${local.s%d}\"\n", i, i-1, i-1)
	}
	doubling.WriteString("}\n")
	unary := strings.Repeat("!", 100_000) + "true"
	cases := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"parentheses", map[string]string{"main.tf": hostilePool(`{ n = ` + parens + ` }`)}, "(MaxNesting)"},
		{"brackets in a local", map[string]string{"main.tf": hostilePool(`{ n = length(local.x) }`) + "locals {\n  x = " + brackets + "\n}\n"}, "(MaxNesting)"},
		{"unary operators", map[string]string{"main.tf": hostilePool(`{ n = ` + unary + ` }`)}, "(MaxNesting)"},
		{"200,000 nested dynamic blocks", map[string]string{"main.tf": hostilePool(`{ n = "a" }`) + dynamic(200_000)}, "(MaxTokens)"},
		{"10,000 nested dynamic blocks", map[string]string{"main.tf": hostilePool(`{ n = "a" }`) + dynamic(10_000)}, "(MaxNesting)"},
		{"doubling locals", map[string]string{"main.tf": hostilePool(`{ n = local.s35 }`) + doubling.String()}, "(MaxStringBytes)"},
		{"template parentheses", map[string]string{"main.tf": hostilePool(`{ n = templatefile("t.tpl", {}) }`), "t.tpl": "${" + parens + "}"}, "t.tpl:1:"},
		{"a huge exponent", map[string]string{"main.tf": hostilePool(`{ n = "${1e100000000}" }`)}, "(MaxNumberDigits)"},
		{"a million digits", map[string]string{"main.tf": hostilePool(`{ n = "a" }`) + "locals {\n  d = " + strings.Repeat("1", 1_000_000) + "\n}\n"}, "(MaxNumberDigits)"},
		{"a computed huge number", map[string]string{"main.tf": hostilePool(`{ n = tostring(1e300 * 1e300) }`)}, "(MaxNumberDigits)"},
		{"a regex program over a long text", map[string]string{"main.tf": hostilePool(`{ n = tostring(can(regex("[a-z]{1,1000}X", local.s))) }`) + "locals {\n  s = replace(format(\"%200000s\", \"\"), \" \", \"a\")\n}\n"}, "(MaxEvalSteps)"},
		{"distinct of 99,000", map[string]string{"main.tf": hostilePool(`{ n = tostring(length(distinct(split(",", file("n.txt"))))) }`), "n.txt": numbers(99_000)}, "(MaxEvalSteps)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := hostileCase(t, "", c.files)
			wantRefusal(t, importHostile(t, dir, Options{}), c.want)
		})
	}
}

// TestHostileCancel: a cancelled context stops an import that would run
// long, with the context's error.
func TestHostileCancel(t *testing.T) {
	dir := hostileCase(t, "nested-for", map[string]string{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := ImportContext(ctx, []string{dir}, Options{Root: dir})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
}

// cancelAfter is a context that is cancelled from its n+1st look on, so
// that a test cancels an evaluation half-way, deterministically.
type cancelAfter struct {
	context.Context
	n int
}

func (c *cancelAfter) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

// TestHostileCancelMidEvaluation: the budget looks at the context while
// HCL iterates, so a cancel stops a long evaluation.
func TestHostileCancelMidEvaluation(t *testing.T) {
	dir := hostileCase(t, "nested-for", map[string]string{})
	ctx := &cancelAfter{Context: context.Background(), n: 3}
	_, err := ImportContext(ctx, []string{dir}, Options{Root: dir})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if ctx.n > -1 {
		t.Fatalf("the context was looked at %d times, want more than 3 (during evaluation)", 3-ctx.n)
	}
}

// TestSandboxInsideRoot: the file family reads files inside the root,
// relative to the configuration's folder; path.module is relative.
func TestSandboxInsideRoot(t *testing.T) {
	dir := hostileCase(t, "", map[string]string{
		"main.tf":   hostilePool(`{ team = trimspace(file("${path.module}/team.txt")), t = templatefile("t.tpl", { x = "y" }), e = tostring(fileexists("team.txt")), n = tostring(length(fileset(".", "*.txt"))) }`),
		"team.txt":  "ml\n",
		"t.tpl":     "a-${x}",
		"other.txt": "",
	})
	res, err := Import([]string{dir}, Options{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Spec.Spec.NodePools[0].Labels
	want := map[string]string{"team": "ml", "t": "a-y", "e": "true", "n": "2"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("label %s = %q, want %q (labels %v)", k, got[k], v, got)
		}
	}
}

// TestBenchImportWithinCaps: the Terraform gpuctl generates for bench's
// 1,000-pool spec imports under every cap, with the budget to spare.
func TestBenchImportWithinCaps(t *testing.T) {
	doc, err := spec.ParseInMemory("p1000.yaml", goldenspec.GKEPools(1000))
	if err != nil {
		t.Fatal(err)
	}
	r, err := check.Document(doc, check.Options{AsOf: asOf, Generate: true})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range r.Envs[0].Terraform {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := readThousandPools(t, dir)
	t.Logf("%d steps of %d", c.budget.steps, MaxEvalSteps)
	if c.budget.steps > MaxEvalSteps/10 {
		t.Errorf("%d steps, more than a tenth of MaxEvalSteps (%d)", c.budget.steps, MaxEvalSteps)
	}
}

// readThousandPools loads and reads the Terraform folder dir with the
// default caps, fails the test unless it yields 1000 node pools, and
// returns the loaded configuration (its budget says what the read cost).
func readThousandPools(t *testing.T, dir string) *tfConfig {
	t.Helper()
	root, err := safefs.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	c, err := loadTerraform([]string{dir}, Options{root: root, ctx: context.Background()})
	if err != nil {
		t.Fatal(err)
	}
	b := newBuilder(FromTerraform)
	if err := readTerraform(b, c); err != nil {
		t.Fatal(err)
	}
	if n := len(b.pools); n != 1000 {
		t.Errorf("%d pools, want 1000", n)
	}
	return c
}

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }

// TestHostileBlueprint: a blueprint's $(...) gets the same sandbox and
// caps: a file outside the root is refused at the setting, a format width
// past the cap too.
func TestHostileBlueprint(t *testing.T) {
	cases := []struct{ expr, want string }{
		{`file("/etc/passwd")`, `file(): argument 1: "/etc/passwd" is outside the folder gpuctl reads`},
		{`file("../secret.txt")`, `file(): argument 1: "../secret.txt" is outside the folder gpuctl reads`},
		{`format("%999999999s", "x")`, "(MaxStringBytes)"},
		{strings.Repeat("(", 5000) + "1" + strings.Repeat(")", 5000), "(MaxNesting)"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			bp := `blueprint_name: b
vars:
  project_id: p
  deployment_name: d
  region: us-central1
deployment_groups:
- group: primary
  modules:
  - id: pool
    source: modules/compute/gke-node-pool
    settings:
      machine_type: $(` + c.expr + `)
`
			dir := hostileCase(t, "", map[string]string{"blueprint.yaml": bp})
			_, err := ImportContext(context.Background(), []string{filepath.Join(dir, "blueprint.yaml")}, Options{Root: dir})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			if !regexp.MustCompile(`^\S+blueprint\.yaml:\d+:\d+: `).MatchString(err.Error()) || strings.Contains(err.Error(), sentinel) {
				t.Errorf("error %q: want it at FILE:LINE:COL, without the sentinel", err)
			}
		})
	}
}

// TestSandboxSubfolder: a configuration in a folder below the root reads
// files relative to its folder, and path.cwd and abspath() start at "/"
// and the root folder's own name, so no absolute path of the machine
// reaches the spec; file() reads through such a path.
func TestSandboxSubfolder(t *testing.T) {
	dir := hostileCase(t, "", map[string]string{
		"main.tf":  hostilePool(`{ team = trimspace(file("team.txt")), a = abspath("team.txt"), m = path.module, r = path.root, c = path.cwd, b = basename(path.cwd), t = trimspace(file("${path.cwd}/team.txt")) }`),
		"team.txt": "ml\n",
	})
	res, err := Import([]string{dir}, Options{Root: filepath.Dir(dir)})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Spec.Spec.NodePools[0].Labels
	top := "/" + filepath.Base(filepath.Dir(dir))
	want := map[string]string{"team": "ml", "a": top + "/case/team.txt", "m": ".", "r": ".", "c": top + "/case", "b": "case", "t": "ml"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("label %s = %q, want %q (labels %v)", k, got[k], v, got)
		}
	}
}

// TestGlobMatch: fileset's patterns, and many "**" against a deep name in
// no time.
func TestGlobMatch(t *testing.T) {
	cases := []struct {
		pat, name string
		want      bool
	}{
		{"*.txt", "a.txt", true},
		{"*.txt", "d/a.txt", false},
		{"**/*.txt", "d/e/a.txt", true},
		{"**/*.txt", "a.txt", true},
		{"d/**", "d/e/f", true},
		{"d/*/f", "d/e/f", true},
		{"d/*/f", "d/e/g/f", false},
	}
	for _, c := range cases {
		if got := globMatch(strings.Split(c.pat, "/"), strings.Split(c.name, "/")); got != c.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", c.pat, c.name, got, c.want)
		}
	}
	deep := strings.Split(strings.Repeat("a/", 40)+"b", "/")
	start := time.Now()
	if globMatch(strings.Split(strings.Repeat("**/a/", 20)+"c", "/"), deep) {
		t.Error("matched")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v", d)
	}
}

// TestRangeCountingDown: range(-1e18) counts down and is refused as
// range(1e18) is.
func TestRangeCountingDown(t *testing.T) {
	dir := hostileCase(t, "", map[string]string{"main.tf": hostilePool(`{ n = tostring(length(range(-1e18))) }`)})
	wantRefusal(t, importHostile(t, dir, Options{}), "range(): a collection of more than 100000 elements (MaxCollection)")
}

// TestHostileTokens: 4 MB of "1," (4,000,000 tokens) in a local is refused before HCL's
// lexer and parser see it, at the byte where the tokens pass the cap.
func TestHostileTokens(t *testing.T) {
	dir := hostileCase(t, "", map[string]string{"main.tf": hostilePool(`{ n = "a" }`) + "locals {\n  x = [" + strings.Repeat("1,", 2_000_000) + "]\n}\n"})
	wantRefusal(t, importHostile(t, dir, Options{}), "more than 2000000 tokens in the files read (MaxTokens)")
}

// TestHostileTFFiles: a .tf that is a link to outside the root, and one
// that is a FIFO, are refused with their path, before anything is read.
func TestHostileTFFiles(t *testing.T) {
	t.Run("link", func(t *testing.T) {
		dir := hostileCase(t, "", map[string]string{"main.tf": hostilePool(`{ n = "a" }`)})
		if err := os.Symlink("../secret.txt", filepath.Join(dir, "extra.tf")); err != nil {
			t.Fatal(err)
		}
		err := importHostile(t, dir, Options{})
		if !errors.Is(err, safefs.ErrOutside) || !strings.Contains(err.Error(), filepath.Join(dir, "extra.tf")) {
			t.Fatalf("error %v, want extra.tf refused as outside the root", err)
		}
	})
	t.Run("fifo", func(t *testing.T) {
		dir := hostileCase(t, "", map[string]string{"main.tf": hostilePool(`{ n = "a" }`)})
		if err := mkfifo(filepath.Join(dir, "extra.tf")); err != nil {
			t.Skip("no FIFO here:", err)
		}
		err := importHostile(t, dir, Options{})
		if !errors.Is(err, safefs.ErrNotRegular) || !strings.Contains(err.Error(), filepath.Join(dir, "extra.tf")) {
			t.Fatalf("error %v, want extra.tf refused as not a regular file", err)
		}
	})
}

// TestScanJSON: jsondecode's argument is held to the value caps before it
// is decoded.
func TestScanJSON(t *testing.T) {
	if err := scanJSONNesting([]byte(`{"a": [1, 2, {"b": "[[[[\"]]"}]}`), "x"); err != nil {
		t.Errorf("ordinary JSON refused: %v", err)
	}
	if err := scanJSONNesting([]byte(strings.Repeat("[", MaxValueDepth+1)), "x"); !errors.Is(err, ErrCap) {
		t.Errorf("deep JSON: %v, want ErrCap", err)
	}
	if err := scanJSONNesting([]byte("["+strings.Repeat("1,", MaxValueNodes+1)+"1]"), "x"); !errors.Is(err, ErrCap) {
		t.Errorf("long JSON: %v, want ErrCap", err)
	}
	dir := hostileCase(t, "", map[string]string{"main.tf": hostilePool(`{ n = tostring(length(jsondecode(local.j))) }`) + "locals {\n  a = join(\",\", [for i in range(1000) : \"1\"])\n  j = \"[${join(\",\", [for i in range(300) : local.a])}]\"\n}\n"})
	wantRefusal(t, importHostile(t, dir, Options{}), "jsondecode(): argument 1: JSON of more than 200000 values (MaxValueNodes)")
}
