package importer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/goccy/go-yaml/parser"

	"github.com/gpuctl/gpuctl/internal/safefs"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Hostile input at the importer's entry: files that are not files, links
// out of the root, YAML built to exhaust the parser or the blueprint
// resolver, a cancelled import, and text written into the spec's comments.

// bpMinimal is a blueprint with one GPU node pool.
const bpMinimal = `blueprint_name: small
vars:
  project_id: p
  deployment_name: small
  region: us-central1
deployment_groups:
- group: primary
  modules:
  - id: pool
    source: modules/compute/gke-node-pool
    settings:
      machine_type: g2-standard-8
      guest_accelerator:
      - type: nvidia-l4
        count: 1
`

// kpMinimal is a Karpenter NodePool of GPU instances.
const kpMinimal = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu
spec:
  template:
    spec:
      requirements:
      - key: node.kubernetes.io/instance-type
        operator: In
        values: [g6.xlarge]
`

// write writes files (name -> content) under dir, making folders.
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// repo is a fresh folder holding .git, the root of what is imported in it.
func repo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// importWithin imports paths with opts and fails the test when it takes
// longer than limit; it returns the error.
func importWithin(t *testing.T, ctx context.Context, limit time.Duration, paths []string, opts Options) (*Result, error) {
	t.Helper()
	type out struct {
		res *Result
		err error
	}
	done := make(chan out, 1)
	start := time.Now()
	go func() {
		res, err := ImportContext(ctx, paths, opts)
		done <- out{res, err}
	}()
	select {
	case o := <-done:
		if d := time.Since(start); d > limit {
			t.Errorf("import of %v took %v, want under %v", paths, d, limit)
		}
		return o.res, o.err
	case <-time.After(limit + 10*time.Second):
		t.Fatalf("import of %v still running after %v", paths, limit+10*time.Second)
		return nil, nil
	}
}

// wantRefused checks that err is a *safefs.Error wrapping want that names
// path.
func wantRefused(t *testing.T, err error, want error, path string) {
	t.Helper()
	var se *safefs.Error
	switch {
	case err == nil:
		t.Fatalf("%s: imported, want it refused (%v)", path, want)
	case !errors.Is(err, want) || !errors.As(err, &se):
		t.Fatalf("%s: %v, want a refusal wrapping %q", path, err, want)
	case !strings.Contains(err.Error(), path):
		t.Errorf("refusal %q does not name %s", err, path)
	}
}

// TestFIFORefused: a FIFO named as a blueprint or Karpenter file, or
// found in a folder, is refused by its mode, at once (reading it would
// block forever), naming the path.
func TestFIFORefused(t *testing.T) {
	dir := repo(t)
	fifo := filepath.Join(dir, "pools.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, from := range []string{FromBlueprint, FromKarpenter, ""} {
		_, err := importWithin(t, context.Background(), 2*time.Second, []string{fifo}, Options{From: from})
		wantRefused(t, err, safefs.ErrNotRegular, fifo)
	}
	// the folder holding it: listed, then refused when read
	_, err := importWithin(t, context.Background(), 2*time.Second, []string{dir}, Options{From: FromKarpenter})
	wantRefused(t, err, safefs.ErrNotRegular, fifo)
}

// TestDeviceLinkRefused: a link to /dev/zero as a blueprint or Karpenter
// file leaves the root (refused as outside it); with the root at / (and a
// relative link, as os.Root follows no absolute one) it is refused as a
// device. Neither reads a byte of it.
func TestDeviceLinkRefused(t *testing.T) {
	dir := repo(t)
	link := filepath.Join(dir, "zero.yaml")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	relLink := filepath.Join(t.TempDir(), "zero.yaml")
	up, err := filepath.Rel(filepath.Dir(relLink), "/dev/zero")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(up, relLink); err != nil {
		t.Fatal(err)
	}
	for _, from := range []string{FromBlueprint, FromKarpenter} {
		_, err := importWithin(t, context.Background(), 2*time.Second, []string{link}, Options{From: from})
		wantRefused(t, err, safefs.ErrOutside, link)
		_, err = importWithin(t, context.Background(), 2*time.Second, []string{relLink}, Options{From: from})
		wantRefused(t, err, safefs.ErrOutside, relLink)
		_, err = importWithin(t, context.Background(), 2*time.Second, []string{relLink}, Options{From: from, Root: "/"})
		wantRefused(t, err, safefs.ErrNotRegular, relLink)
	}
	// found in a folder
	_, err = importWithin(t, context.Background(), 2*time.Second, []string{dir}, Options{From: FromBlueprint})
	wantRefused(t, err, safefs.ErrOutside, link)
}

// TestLinkOutsideRootRefused: a link from inside the repository to a file
// beside it (a stand-in for a secret) is not followed, whether it is the
// PATH named or a file of the folder named; a link inside the repository
// is.
func TestLinkOutsideRootRefused(t *testing.T) {
	top := t.TempDir()
	outside := filepath.Join(top, "outside.yaml")
	write(t, top, map[string]string{"outside.yaml": kpMinimal})
	dir := filepath.Join(top, "repo")
	write(t, dir, map[string]string{".git/HEAD": "ref: refs/heads/main\n", "real/np.yaml": kpMinimal})
	for name, target := range map[string]string{"named.yaml": outside, "k/np.yaml": "../../outside.yaml", "abs/np.yaml": outside} {
		p := filepath.Join(dir, name)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	_, err := importWithin(t, context.Background(), 2*time.Second, []string{filepath.Join(dir, "named.yaml")}, Options{From: FromKarpenter})
	wantRefused(t, err, safefs.ErrOutside, filepath.Join(dir, "named.yaml"))
	for _, sub := range []string{"k", "abs"} {
		_, err = importWithin(t, context.Background(), 2*time.Second, []string{filepath.Join(dir, sub)}, Options{From: FromKarpenter})
		wantRefused(t, err, safefs.ErrOutside, filepath.Join(dir, sub, "np.yaml"))
	}
	// Detection reads through the root too.
	if _, err := Detect(filepath.Join(dir, "named.yaml")); !errors.Is(err, safefs.ErrOutside) {
		t.Errorf("Detect of a link out of the root: %v, want it refused", err)
	}
	// A link that stays inside the repository is followed.
	if err := os.Symlink("../real/np.yaml", filepath.Join(dir, "k", "inside.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "k", "np.yaml")); err != nil {
		t.Fatal(err)
	}
	res, err := importWithin(t, context.Background(), 2*time.Second, []string{filepath.Join(dir, "k")}, Options{From: FromKarpenter})
	if err != nil || len(res.Spec.Spec.NodePools) != 1 {
		t.Fatalf("a link inside the root: %v, want it imported", err)
	}
}

// TestRootOption: --root (Options.Root) replaces the repository as the
// root: a PATH outside it is refused before anything is read, a link that
// leaves it is refused although it stays inside the repository, and a
// wider root admits what the narrower refused.
func TestRootOption(t *testing.T) {
	dir := repo(t)
	write(t, dir, map[string]string{"common/np.yaml": kpMinimal, "team/other.yaml": kpMinimal})
	link := filepath.Join(dir, "team", "np.yaml")
	if err := os.Symlink("../common/np.yaml", link); err != nil {
		t.Fatal(err)
	}
	// the default root is the repository: the link stays inside it
	if _, err := Import([]string{link}, Options{From: FromKarpenter}); err != nil {
		t.Fatalf("default root: %v", err)
	}
	// --root team: the link leaves it
	_, err := Import([]string{link}, Options{From: FromKarpenter, Root: filepath.Join(dir, "team")})
	wantRefused(t, err, safefs.ErrOutside, link)
	// a PATH outside --root
	_, err = Import([]string{filepath.Join(dir, "common", "np.yaml")}, Options{From: FromKarpenter, Root: filepath.Join(dir, "team")})
	var out *OutsideRootError
	if !errors.As(err, &out) || !errors.Is(err, safefs.ErrOutside) || !strings.Contains(err.Error(), "--root") {
		t.Fatalf("PATH outside --root: %v, want an OutsideRootError that says to pass --root", err)
	}
	if _, err := DetectIn(filepath.Join(dir, "common", "np.yaml"), filepath.Join(dir, "team")); !errors.As(err, &out) {
		t.Errorf("DetectIn outside its root: %v", err)
	}
	// a second PATH outside the first one's root (no .git: the first
	// PATH's folder)
	plain := t.TempDir()
	write(t, plain, map[string]string{"a/np.yaml": kpMinimal, "b/np.yaml": kpMinimal})
	_, err = Import([]string{filepath.Join(plain, "a"), filepath.Join(plain, "b")}, Options{From: FromKarpenter})
	if !errors.As(err, &out) || out.Path != filepath.Join(plain, "b") {
		t.Fatalf("second PATH outside the first's root: %v", err)
	}
	res, err := Import([]string{filepath.Join(plain, "a"), filepath.Join(plain, "b")}, Options{From: FromKarpenter, Root: plain})
	if err != nil || len(res.Files) != 2 {
		t.Fatalf("--root holding both PATHs: %v", err)
	}
	// a root that is not a folder
	if _, err := Import([]string{link}, Options{From: FromKarpenter, Root: filepath.Join(dir, "nope")}); err == nil {
		t.Error("a --root that does not exist was accepted")
	}
}

// TestDeepKarpenterRefusedFast: a Karpenter file nested a million levels
// deep (a few MB of "[") is refused by the byte scan at its line:column,
// before the YAML library builds a tree, in well under a second.
func TestDeepKarpenterRefusedFast(t *testing.T) {
	dir := repo(t)
	deep := "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: deep\nspec: " + strings.Repeat("[", 1_000_000) + "\n"
	block := "apiVersion: karpenter.sh/v1\nkind: NodePool\nspec:\n"
	for i := 1; i < 200; i++ {
		block += strings.Repeat(" ", i) + "k:\n"
	}
	write(t, dir, map[string]string{"flow.yaml": deep, "block.yaml": block})
	for _, c := range []struct {
		file string
		line int
	}{{"flow.yaml", 5}, {"block.yaml", 67}} {
		p := filepath.Join(dir, c.file)
		for _, from := range []string{FromKarpenter, ""} {
			_, err := importWithin(t, context.Background(), time.Second, []string{p}, Options{From: from})
			var se *spec.Error
			if !errors.As(err, &se) {
				t.Fatalf("%s (--from %q): %v, want a *spec.Error", c.file, from, err)
			}
			if se.File != p || se.Line != c.line || se.Column == 0 || !strings.Contains(se.Message, "64") {
				t.Errorf("%s: refused at %s:%d:%d (%s), want line %d and the 64-level limit", c.file, se.File, se.Line, se.Column, se.Message, c.line)
			}
		}
	}
}

// laughs is a YAML billion-laughs mapping under key: ten anchors, each a
// list of ten aliases of the one before (10^10 values once expanded).
func laughs(key string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:\n  l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n", key)
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "  l%d: &l%d [*l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	return b.String()
}

// TestBlueprintBillionLaughs: anchors in a blueprint's vars, in its
// deployment file and in Karpenter YAML are refused by the alias check
// before the tree is built; vars that refer to each other ten times a
// level are refused by the resolver's value count, templates that double
// a string by its length cap and a billion num_node_pools by the pool cap,
// each with file:line and quickly.
func TestBlueprintBillionLaughs(t *testing.T) {
	dir := repo(t)
	bpAnchors := strings.Replace(bpMinimal, "vars:\n", laughs("vars")+"  other: 1\n", 1)
	var refs strings.Builder
	refs.WriteString("  v0: x\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&refs, "  v%d: [%s]\n", i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf(`"$(vars.v%d)", `, i-1), 10), ", "))
	}
	bpRefs := strings.Replace(bpMinimal, "vars:\n", "vars:\n"+refs.String(), 1)
	bpRefs = strings.Replace(bpRefs, "      machine_type: g2-standard-8\n", "      machine_type: g2-standard-8\n      kubernetes_labels: $(vars.v9)\n", 1)
	var dbl strings.Builder
	dbl.WriteString("  s0: " + strings.Repeat("x", 1000) + "\n")
	for i := 1; i < 30; i++ {
		fmt.Fprintf(&dbl, "  s%d: $(vars.s%d)$(vars.s%d)\n", i, i-1, i-1)
	}
	bpDouble := strings.Replace(bpMinimal, "vars:\n", "vars:\n"+dbl.String(), 1)
	bpDouble = strings.Replace(bpDouble, "      machine_type: g2-standard-8\n", "      machine_type: g2-standard-8\n      name: $(vars.s29)\n", 1)
	write(t, dir, map[string]string{
		"anchors/bp.yaml":    bpAnchors,
		"deploy/bp.yaml":     bpMinimal,
		"deploy/deploy.yaml": laughs("vars"),
		"karpenter/np.yaml":  kpMinimal + "  " + strings.ReplaceAll(laughs("x"), "\n", "\n  "),
		"refs/bp.yaml":       bpRefs,
		"double/bp.yaml":     bpDouble,
		"pools/bp.yaml":      strings.Replace(bpMinimal, "      machine_type: g2-standard-8\n", "      machine_type: g2-standard-8\n      num_node_pools: 1000000000\n", 1),
	})
	for _, c := range []struct {
		paths []string
		from  string
		want  string
		file  string
	}{
		{[]string{"anchors/bp.yaml"}, "", "aliases expand", "anchors/bp.yaml"},
		{[]string{"deploy/bp.yaml", "deploy/deploy.yaml"}, FromBlueprint, "aliases expand", "deploy/deploy.yaml"},
		{[]string{"deploy"}, FromBlueprint, "aliases expand", "deploy/deploy.yaml"},
		{[]string{"karpenter/np.yaml"}, FromKarpenter, "aliases expand", "karpenter/np.yaml"},
		{[]string{"refs/bp.yaml"}, "", fmt.Sprintf("more than %d values", MaxBlueprintValues), "refs/bp.yaml:"},
		{[]string{"double/bp.yaml"}, "", "grows longer than 1 MiB", "double/bp.yaml:"},
		{[]string{"pools/bp.yaml"}, "", fmt.Sprintf("num_node_pools is over %d", MaxBlueprintNodePools), "pools/bp.yaml:"},
	} {
		var paths []string
		for _, p := range c.paths {
			paths = append(paths, filepath.Join(dir, p))
		}
		_, err := importWithin(t, context.Background(), 2*time.Second, paths, Options{From: c.from})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), filepath.Join(dir, c.file)) {
			t.Errorf("%v: %v, want %q at %s", c.paths, err, c.want, c.file)
		}
	}
	// A --var value is held to the same limits: a billion laughs there is
	// taken as the string it is, not expanded.
	res, err := Import([]string{filepath.Join(dir, "deploy", "bp.yaml")}, Options{Vars: []string{"x=" + strings.ReplaceAll(laughs("y"), "\n", "\n")}})
	if err != nil || res == nil {
		t.Fatalf("--var with anchors: %v", err)
	}
}

// countdown is a context that is done after its Err has been asked n
// times: an import cancelled while it runs, at a point that does not
// depend on the machine's speed.
type countdown struct {
	context.Context
	n    atomic.Int64
	done chan struct{}
}

func newCountdown(n int64) *countdown {
	c := &countdown{Context: context.Background(), done: make(chan struct{})}
	c.n.Store(n)
	return c
}

func (c *countdown) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

func (c *countdown) Done() <-chan struct{} { return c.done }

// TestImportCancelled: an import whose context is done before it starts,
// or becomes done while it reads files, resolves a blueprint's vars or
// imports NodePools, returns an error wrapping context.Canceled at once
// and no result.
func TestImportCancelled(t *testing.T) {
	dir := repo(t)
	files := map[string]string{"bp/bp.yaml": bpMinimal}
	for i := 0; i < 50; i++ {
		files[fmt.Sprintf("karpenter/np-%02d.yaml", i)] = strings.Replace(kpMinimal, "name: gpu", fmt.Sprintf("name: gpu-%d", i), 1)
	}
	// a blueprint that resolves about 100,000 values
	var refs strings.Builder
	refs.WriteString("  v0: x\n")
	for i := 1; i < 6; i++ {
		fmt.Fprintf(&refs, "  v%d: [%s]\n", i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf(`"$(vars.v%d)", `, i-1), 10), ", "))
	}
	bp := strings.Replace(bpMinimal, "vars:\n", "vars:\n"+refs.String(), 1)
	files["big/bp.yaml"] = strings.Replace(bp, "      machine_type: g2-standard-8\n", "      machine_type: g2-standard-8\n      extra: $(vars.v5)\n", 1)
	write(t, dir, files)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, p := range []string{"bp/bp.yaml", "karpenter", "big/bp.yaml"} {
		path := filepath.Join(dir, p)
		res, err := importWithin(t, ctx, 100*time.Millisecond, []string{path}, Options{})
		if !errors.Is(err, context.Canceled) || res != nil {
			t.Errorf("%s, cancelled before: %v (result %v), want context.Canceled and no result", p, err, res != nil)
		}
		// Uncancelled, the import succeeds after checking the context
		// total times; cancelled at any of those checks, it stops there.
		count := newCountdown(1 << 40)
		if _, err := ImportContext(count, []string{path}, Options{}); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		total := 1<<40 - count.n.Load()
		if total < 3 {
			t.Fatalf("%s: the import checked its context %d times", p, total)
		}
		for _, n := range []int64{0, 1, total / 2, total - 1} {
			res, err := importWithin(t, newCountdown(n), time.Second, []string{path}, Options{})
			if !errors.Is(err, context.Canceled) || res != nil {
				t.Errorf("%s, cancelled after %d checks: %v, want context.Canceled and no result", p, n, err)
			}
		}
	}
}

// TestSpecCommentsEscaped: what the spec's comments echo (file names,
// unknown values' paths and reasons, skipped entries' names, origins and
// reasons, origin notes) and what its values hold cannot start a line of
// their own: the spec stays one document that spec.Parse reads with the
// values imported.
func TestSpecCommentsEscaped(t *testing.T) {
	evil := "nope\n---\napiVersion: v1\nkind: Secret\r\ndata: {}\u0085---\u2028x: y"
	at := Origin{File: "main.tf\n---\nkind: Secret", Line: 3, Column: 1, Note: "note\n---\n"}
	res := &Result{
		From:    FromTerraform,
		Files:   []string{"ok.tf", "bad\n---\napiVersion: v1\nkind: Secret.tf"},
		Origins: map[string]Origin{"spec.provider": at, "spec.nodePools[0].labels[\"k\"]": at},
		Unknowns: []Unknown{{Path: "spec.region\n---\n", What: "x " + evil, Because: []string{"an expression gpuctl cannot evaluate (" + evil + ")"},
			Origin: at, Hint: "pass --region\n---\n"}},
		Skipped: []Skipped{{What: "module " + evil, Reason: "because " + evil, Origin: at}},
		Spec: &spec.ClusterSpec{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: "evil"},
			Spec: spec.Spec{Provider: spec.ProviderGKE, Region: "us-central1", ClusterName: "c", NodePools: []spec.NodePool{{
				Name: "gpu", MachineType: "a2-highgpu-1g", GPU: spec.GPU{Type: "nvidia-tesla-a100", Count: 1},
				Labels: map[string]string{"plain": "a, b"}}}}},
	}
	out := res.YAML()
	checkOneDocument(t, out)
	doc, err := spec.Parse("imported.yaml", out)
	if err != nil {
		t.Fatalf("spec.Parse of the imported spec: %v\n%s", err, out)
	}
	got := doc.Spec.Spec.NodePools[0].Labels
	if got["plain"] != "a, b" {
		t.Errorf("labels read back as %q", got)
	}
}

// checkOneDocument fails unless out is one YAML document and every line
// that is not a value of the spec's keys is a comment.
func checkOneDocument(t *testing.T, out []byte) {
	t.Helper()
	f, err := parser.ParseBytes(out, 0)
	if err != nil {
		t.Fatalf("imported spec does not parse: %v\n%s", err, out)
	}
	if n := len(f.Docs); n != 1 {
		t.Fatalf("imported spec holds %d YAML documents, want 1:\n%s", n, out)
	}
	for i, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "---") || strings.HasPrefix(l, "kind: Secret") || strings.ContainsAny(l, "\r\u0085\u2028\u202e") {
			t.Errorf("line %d starts a document or holds a line break of its own: %q", i+1, l)
		}
	}
}

// TestExpressionErrorStaysInComment: a Terraform expression whose error
// quotes a string with line breaks and a document marker (file() of a
// path that holds them) is listed as unknown on one comment line; the
// spec written is one document spec.Parse reads.
func TestExpressionErrorStaysInComment(t *testing.T) {
	dir := repo(t)
	write(t, filepath.Join(dir, "infra"), map[string]string{"main.tf": `resource "google_container_node_pool" "gpu" {
  name       = "gpu"
  cluster    = "c"
  location   = "us-central1"
  node_count = file("nope\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: x")
  node_config {
    machine_type = "a2-highgpu-1g"
    guest_accelerator {
      type  = "nvidia-tesla-a100"
      count = 1
    }
  }
}
`})
	res, err := Import([]string{filepath.Join(dir, "infra")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Unknowns) == 0 {
		t.Fatalf("node_count of a failing file() is not listed as unknown:\n%s", res.YAML())
	}
	out := res.YAML()
	checkOneDocument(t, out)
	if _, err := spec.Parse("imported.yaml", out); err != nil {
		t.Fatalf("spec.Parse: %v\n%s", err, out)
	}
}

// TestBlueprintMessagesQuoteNoContent: the resolver's own errors name the
// file:line and the var, never the value or the expression's text.
func TestBlueprintMessagesQuoteNoContent(t *testing.T) {
	dir := repo(t)
	secret := "s3cr3t-value"
	bad := strings.Replace(bpMinimal, "vars:\n", "vars:\n  m: {a: 1}\n", 1)
	bad = strings.Replace(bad, "      machine_type: g2-standard-8\n", "      machine_type: g2-standard-8\n      name: \""+secret+"-$(vars.m)\"\n", 1)
	unclosed := strings.Replace(bpMinimal, "      machine_type: g2-standard-8\n", "      machine_type: g2-standard-8\n      name: \""+secret+"-$(vars.m\"\n", 1)
	write(t, dir, map[string]string{"bad/bp.yaml": bad, "unclosed/bp.yaml": unclosed})
	for _, p := range []string{"bad/bp.yaml", "unclosed/bp.yaml"} {
		_, err := Import([]string{filepath.Join(dir, p)}, Options{})
		if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), filepath.Join(dir, p)+":") {
			t.Errorf("%s: %v, want an error at its file:line that does not quote the value", p, err)
		}
	}
}

// TestControlCharacterValueLeftOut: a label whose key or value holds a line
// break (from a heredoc, or "\n" in a string) is left out of the imported
// spec with its reason at its .tf origin, so the spec written parses.
func TestControlCharacterValueLeftOut(t *testing.T) {
	dir := t.TempDir()
	tf := `resource "google_container_node_pool" "gpu" {
  name     = "gpu"
  cluster  = "c"
  location = "us-central1-a"
  node_config {
    machine_type = "g2-standard-8"
    labels       = { team = "ml\n---\nkind: Secret", "two\nlines" = "x", ok = "fine" }
    guest_accelerator {
      type  = "nvidia-l4"
      count = 1
    }
  }
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(tf), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Import([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	labels := res.Spec.Spec.NodePools[0].Labels
	if labels["ok"] != "fine" || len(labels) != 1 {
		t.Errorf("labels = %q, want only ok=fine", labels)
	}
	found := 0
	for _, u := range res.Unknowns {
		if strings.Contains(strings.Join(u.Because, " "), "control character") && u.Origin.Line == 7 {
			found++
		}
	}
	if found != 2 {
		t.Errorf("%d values listed as left out at main.tf:7, want 2: %+v", found, res.Unknowns)
	}
	out := res.YAML()
	checkOneDocument(t, out)
	if _, err := spec.Parse("imported.yaml", out); err != nil {
		t.Fatalf("the imported spec does not parse: %v", err)
	}
}

// TestVarFileLinkOutOfRoot: a --var-file named on the command line that a
// pull request made a link leaving the root is refused (it is read through
// the root when it lies inside it), and its content reaches nothing.
func TestVarFileLinkOutOfRoot(t *testing.T) {
	top := t.TempDir()
	if err := os.WriteFile(filepath.Join(top, "sa.json"), []byte(`{"team":"sentinel-file-7731"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(top, "repo")
	write(t, dir, map[string]string{".git/HEAD": "ref: refs/heads/main\n", "main.tf": `variable "team" {}
resource "google_container_node_pool" "gpu" {
  name     = "gpu"
  cluster  = "c"
  location = "us-central1-a"
  node_config {
    machine_type = "g2-standard-8"
    labels       = { team = var.team }
    guest_accelerator {
      type  = "nvidia-l4"
      count = 1
    }
  }
}
`})
	link := filepath.Join(dir, "ci.tfvars.json")
	if err := os.Symlink("../sa.json", link); err != nil {
		t.Fatal(err)
	}
	res, err := Import([]string{dir}, Options{VarFiles: []string{link}})
	if err == nil || !errors.Is(err, safefs.ErrOutside) {
		t.Fatalf("import = %v, want a refusal of the link", err)
	}
	if strings.Contains(err.Error(), "sentinel") || res != nil && strings.Contains(string(res.YAML()), "sentinel") {
		t.Errorf("the secret reached the output: %v", err)
	}
}

// TestFileNameWithLineBreak: a .tf or YAML file whose name holds a line
// break (a forged CI log line) is refused with the name escaped.
func TestFileNameWithLineBreak(t *testing.T) {
	for _, name := range []string{"m\n::error file=README.md::forged\n.tf", "np\n::error::x\n.yaml"} {
		dir := t.TempDir()
		write(t, dir, map[string]string{name: kpMinimal})
		_, err := Import([]string{dir}, Options{})
		if err == nil || !strings.Contains(err.Error(), "control character") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v", name, err)
		}
	}
}

// TestNotAWholeNumberListed: a GPU count that is not a whole number is
// left out and listed with its reason at its origin, not dropped silently.
func TestNotAWholeNumberListed(t *testing.T) {
	for _, count := range []string{"1.5", `"abc"`, "99999999999999999999"} {
		dir := t.TempDir()
		write(t, dir, map[string]string{"main.tf": `resource "google_container_node_pool" "gpu" {
  name     = "gpu"
  cluster  = "c"
  location = "us-central1-a"
  node_config {
    machine_type = "g2-standard-8"
    guest_accelerator {
      type  = "nvidia-l4"
      count = ` + count + `
    }
  }
}
`})
		res, err := Import([]string{dir}, Options{})
		if err != nil {
			var np *NoPoolsError
			if !errors.As(err, &np) {
				t.Fatalf("count %s: %v", count, err)
			}
			res = np.Result
		}
		found := false
		for _, u := range res.Unknowns {
			found = found || strings.Contains(strings.Join(u.Because, " "), "not a whole number") && u.Origin.Line == 9
		}
		if !found {
			t.Errorf("count %s: not listed as left out: %+v", count, res.Unknowns)
		}
	}
}
