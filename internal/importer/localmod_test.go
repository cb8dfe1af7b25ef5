package importer

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// moduleTree writes files (path inside the folder -> content) into a new
// folder, its own root, and returns it.
func moduleTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// skipReason is the reason res lists what as skipped for; "" when it does
// not.
func skipReason(res *Result, what string) string {
	for _, s := range res.Skipped {
		if s.What == what {
			return s.Reason
		}
	}
	return ""
}

// TestLocalModuleCycle: a module that calls itself, directly or through
// another, is listed as skipped where the cycle closes, and the rest is
// read.
func TestLocalModuleCycle(t *testing.T) {
	dir := moduleTree(t, map[string]string{
		"main.tf":   hostilePool(`{ team = "ml" }`) + "module \"self\" {\n  source = \"./\"\n}\nmodule \"a\" {\n  source = \"./a\"\n}\n",
		"a/main.tf": "module \"b\" {\n  source = \"../b\"\n}\n",
		"b/main.tf": "module \"a\" {\n  source = \"../a\"\n}\n",
	})
	res, err := Import([]string{dir}, Options{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	if r := skipReason(res, "module.self"); !strings.Contains(r, "calls itself") {
		t.Errorf("module.self: reason %q, want a module that calls itself; skipped: %+v", r, res.Skipped)
	}
	if r := skipReason(res, "module.a.module.b.module.a"); !strings.Contains(r, "calls itself") {
		t.Errorf("module.a.module.b.module.a: reason %q, want a module that calls itself; skipped: %+v", r, res.Skipped)
	}
	if len(res.Spec.Spec.NodePools) != 1 {
		t.Errorf("%d pools, want the root module's 1", len(res.Spec.Spec.NodePools))
	}
}

// TestLocalModuleDepth: local modules nested past MaxModuleDepth stop the
// import at the call that goes too deep.
func TestLocalModuleDepth(t *testing.T) {
	files := map[string]string{"main.tf": hostilePool(`{ team = "ml" }`) + "module \"m\" {\n  source = \"./m\"\n}\n"}
	p := "m"
	for i := 0; i <= MaxModuleDepth+1; i++ {
		files[p+"/main.tf"] = "module \"m\" {\n  source = \"./m\"\n}\n"
		p += "/m"
	}
	dir := moduleTree(t, files)
	err := importHostile(t, dir, Options{})
	wantRefusal(t, err, fmt.Sprintf("local modules nested deeper than %d (MaxModuleDepth)", MaxModuleDepth))
}

// TestLocalModuleBudget: the evaluation budget counts across the module
// instances: one instance of a module that spends a third of it imports,
// four stop the import.
func TestLocalModuleBudget(t *testing.T) {
	mod := "variable \"n\" {}\nlocals {\n  xs = flatten([for i in range(1000) : [for j in range(var.n) : i * j]])\n}\n" +
		"resource \"google_container_node_pool\" \"p\" {\n  name = \"p${length(local.xs)}\"\n  cluster = \"c\"\n  location = \"us-central1-a\"\n" +
		"  node_config {\n    machine_type = \"g2-standard-8\"\n    guest_accelerator {\n      type  = \"nvidia-l4\"\n      count = 1\n    }\n  }\n}\n"
	call := func(keys string) string {
		return "module \"pool\" {\n  source   = \"./pool\"\n  for_each = toset([" + keys + "])\n  n        = 30\n}\n"
	}
	dir := moduleTree(t, map[string]string{"main.tf": call(`"a"`), "pool/main.tf": mod})
	res, err := Import([]string{dir}, Options{Root: dir})
	if err != nil {
		t.Fatalf("one instance: %v", err)
	}
	if len(res.Spec.Spec.NodePools) != 1 {
		t.Fatalf("one instance: %d pools, want 1", len(res.Spec.Spec.NodePools))
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(call(`"a", "b", "c", "d"`)), 0o644); err != nil {
		t.Fatal(err)
	}
	wantRefusal(t, importHostile(t, dir, Options{}), "(MaxEvalSteps)")
}

// TestLocalModuleUnknownForEach: a module call whose for_each is unknown
// is listed as skipped with what it depends on, and its outputs are
// unknown.
func TestLocalModuleUnknownForEach(t *testing.T) {
	dir := moduleTree(t, map[string]string{
		"main.tf": hostilePool(`{ team = module.pool["a"].team }`) +
			"variable \"pools\" {}\nmodule \"pool\" {\n  source   = \"./pool\"\n  for_each = var.pools\n}\n",
		"pool/main.tf": "output \"team\" {\n  value = \"ml\"\n}\n",
	})
	res, err := Import([]string{dir}, Options{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	if r := skipReason(res, "module.pool"); !strings.Contains(r, "for_each is unknown until Terraform applies: it depends on var.pools") {
		t.Errorf("module.pool: reason %q; skipped: %+v", r, res.Skipped)
	}
	found := false
	for _, u := range res.Unknowns {
		found = found || strings.Contains(strings.Join(u.Because, ", "), `module.pool["a"].team, a module output`)
	}
	if !found {
		t.Errorf("the label from module.pool is not unknown as a module output: %+v", res.Unknowns)
	}
}

// TestLocalModulePathModule: path.module in a module is its folder
// relative to the root module's, "../.." for a module repository's example,
// and file() reads relative to the root module's folder, as Terraform does.
func TestLocalModulePathModule(t *testing.T) {
	dir := moduleTree(t, map[string]string{
		"team.txt": "ml",
		"main.tf": "variable \"zone\" {}\n" +
			"resource \"google_container_node_pool\" \"p\" {\n  name = \"p\"\n  cluster = \"c\"\n  location = var.zone\n" +
			"  node_config {\n    machine_type = \"g2-standard-8\"\n    labels = { at = replace(path.module, \"/\", \"_\"), team = file(\"${path.module}/team.txt\") }\n" +
			"    guest_accelerator {\n      type  = \"nvidia-l4\"\n      count = 1\n    }\n  }\n}\n",
		"examples/l4/main.tf": "module \"pool\" {\n  source = \"../..\"\n  zone   = \"us-central1-a\"\n}\n",
	})
	res, err := Import([]string{filepath.Join(dir, "examples", "l4")}, Options{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Spec.Spec.NodePools) != 1 {
		t.Fatalf("%d pools, want 1; skipped %+v", len(res.Spec.Spec.NodePools), res.Skipped)
	}
	p := res.Spec.Spec.NodePools[0]
	if p.Labels["at"] != ".._.." || p.Labels["team"] != "ml" {
		t.Errorf("labels %v, want at=.._.. (path.module ../..) and team=ml", p.Labels)
	}
}

// TestCountedResourceByKey: TYPE.NAME[0].ATTR and TYPE.NAME["k"].ATTR of
// resources with a known count or for_each are the instance's configured
// values, evaluated with its count.index or each.
func TestCountedResourceByKey(t *testing.T) {
	dir := moduleTree(t, map[string]string{
		"main.tf": hostilePool(`{ team = terraform_data.team[0].input, zone = terraform_data.zone["b"].input, computed = terraform_data.team[0].id }`) +
			"resource \"terraform_data\" \"team\" {\n  count = 1\n  input = \"ml-${count.index}\"\n}\n" +
			"resource \"terraform_data\" \"zone\" {\n  for_each = toset([\"a\", \"b\"])\n  input = \"us-central1-${each.key}\"\n}\n",
	})
	res, err := Import([]string{dir}, Options{Root: dir, KubernetesVersion: "1.34"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Unknowns) != 1 || !strings.Contains(strings.Join(res.Unknowns[0].Because, ", "), "terraform_data.team[0].id, which the provider computes") {
		t.Errorf("unknowns %+v, want the labels unknown for terraform_data.team[0].id alone", res.Unknowns)
	}
	// the labels are unknown as a whole (one is); the known ones evaluate
	dir2 := moduleTree(t, map[string]string{
		"main.tf": hostilePool(`{ team = terraform_data.team[0].input, zone = terraform_data.zone["b"].input }`) +
			"resource \"terraform_data\" \"team\" {\n  count = 1\n  input = \"ml-${count.index}\"\n}\n" +
			"resource \"terraform_data\" \"zone\" {\n  for_each = toset([\"a\", \"b\"])\n  input = \"us-central1-${each.key}\"\n}\n",
	})
	res, err = Import([]string{dir2}, Options{Root: dir2})
	if err != nil {
		t.Fatal(err)
	}
	if l := res.Spec.Spec.NodePools[0].Labels; l["team"] != "ml-0" || l["zone"] != "us-central1-b" {
		t.Errorf("labels %v, want team=ml-0 zone=us-central1-b", l)
	}
}

// TestLocalModuleFileLinkOut: a .tf file of a module folder that is a link
// leaving the root is refused, as in the root module: the import stops
// naming the file, and nothing of the target is read.
func TestLocalModuleFileLinkOut(t *testing.T) {
	top := t.TempDir()
	if err := os.WriteFile(filepath.Join(top, "secret.tf"), []byte("# "+sentinel+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(top, "case")
	if err := os.MkdirAll(filepath.Join(dir, "mod"), 0o755); err != nil {
		t.Fatal(err)
	}
	main := hostilePool(`{ team = "ml" }`) + "module \"m\" {\n  source = \"./mod\"\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../secret.tf", filepath.Join(dir, "mod", "main.tf")); err != nil {
		t.Fatal(err)
	}
	_, err := Import([]string{dir}, Options{Root: dir})
	if err == nil || !strings.Contains(err.Error(), filepath.Join("mod", "main.tf")) || !strings.Contains(err.Error(), "outside the folder gpuctl reads") {
		t.Fatalf("error %v, want mod/main.tf refused as outside the root", err)
	}
	if strings.Contains(err.Error(), sentinel) {
		t.Errorf("the error carries the file's content: %v", err)
	}
}

// TestLocalModuleOutputsByKey: module.NAME[0].OUT and module.NAME["k"].OUT
// of calls with count and for_each are the instance's output; an output the
// module does not declare is unknown, saying so.
func TestLocalModuleOutputsByKey(t *testing.T) {
	dir := moduleTree(t, map[string]string{
		"main.tf": hostilePool(`{ net = module.net[0].name, zone = module.zone["b"].name, n = length(keys(module.zone)) }`) +
			"module \"net\" {\n  source = \"./named\"\n  count  = 1\n  name   = \"vpc-${count.index}\"\n}\n" +
			"module \"zone\" {\n  source   = \"./named\"\n  for_each = toset([\"a\", \"b\"])\n  name     = \"us-central1-${each.key}\"\n}\n",
		"named/main.tf": "variable \"name\" {}\noutput \"name\" {\n  value = var.name\n}\n",
	})
	res, err := Import([]string{dir}, Options{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	if l := res.Spec.Spec.NodePools[0].Labels; l["net"] != "vpc-0" || l["zone"] != "us-central1-b" || l["n"] != "2" {
		t.Errorf("labels %v, want net=vpc-0 zone=us-central1-b n=2", l)
	}
	main := filepath.Join(dir, "main.tf")
	data, _ := os.ReadFile(main)
	if err := os.WriteFile(main, []byte(strings.Replace(string(data), `module.net[0].name`, `module.net[0].id`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = Import([]string{dir}, Options{Root: dir, KubernetesVersion: "1.34"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Unknowns) != 1 || !strings.Contains(strings.Join(res.Unknowns[0].Because, ", "), "module.net[0].id, which module.net[0] does not declare as an output") {
		t.Errorf("unknowns %+v, want the labels unknown for module.net[0].id", res.Unknowns)
	}
}

// TestLocalModuleBadCount: a negative count and a for_each that is not a
// map or set are listed as skipped, not a crash.
func TestLocalModuleBadCount(t *testing.T) {
	dir := moduleTree(t, map[string]string{
		"main.tf": hostilePool(`{ team = "ml" }`) +
			"module \"neg\" {\n  source = \"./m\"\n  count  = -1\n}\n" +
			"module \"num\" {\n  source   = \"./m\"\n  for_each = 3\n}\n" +
			"module \"list\" {\n  source   = \"./m\"\n  for_each = [1, 2]\n}\n",
		"m/main.tf": "output \"x\" {\n  value = 1\n}\n",
	})
	res, err := Import([]string{dir}, Options{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	for what, want := range map[string]string{"module.neg": "count is negative", "module.num": "for_each is not a map or a set of strings", "module.list": "for_each is not a map or a set of strings"} {
		if r := skipReason(res, what); r != want {
			t.Errorf("%s: reason %q, want %q", what, r, want)
		}
	}
}
