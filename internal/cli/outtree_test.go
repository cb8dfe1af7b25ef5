package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuctl/gpuctl/internal/plan"
)

// outSpec is the spec the output-tree tests generate.
const outSpec = "../../examples/gke-h100-l4.yaml"

// The sentinels of the hostile output trees: a file outside the tree and
// a value in the environment; neither may reach stdout or stderr.
const (
	sentinelFile = "SENTINEL-FILE-7f3a9c outside the output tree"
	sentinelEnv  = "SENTINEL-ENV-c41b2e"
)

// gpuctl runs the CLI in-process: exit code, stdout, stderr.
func gpuctl(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	streams, _, out, errOut := TestStreams()
	code := RunWithFactory(context.Background(), args, streams, fakeFactory(nil))
	return code, out.String(), errOut.String()
}

// generated is a fresh `generate all` tree under a temporary folder, and
// a sentinel file beside it (not in it).
func generated(t *testing.T) (out, secret string) {
	t.Helper()
	dir := t.TempDir()
	out, secret = filepath.Join(dir, "out"), filepath.Join(dir, "secret.txt")
	if err := os.WriteFile(secret, []byte(sentinelFile+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := gpuctl(t, "generate", "all", outSpec, "--as-of", planAsOf, "--out", out); code != ExitOK {
		t.Fatalf("generate: exit %d\n%s", code, errOut)
	}
	return out, secret
}

// snapshot is every entry under dir: a file's content and mode, a link's
// target, a folder, so that a test can tell the tree did not change.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			m[rel] = "link " + target
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m[rel] = info.Mode().String() + " " + string(data)
		default:
			m[rel] = info.Mode().Type().String()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func appendLine(t *testing.T, path, line string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
}

func relink(t *testing.T, target, path string) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

// hostileTrees are the edits of a generated tree that gpuctl must not
// read: each returns the path (relative to the tree) the refusal names.
var hostileTrees = []struct {
	name string
	edit func(t *testing.T, out, secret string) string
}{
	{"link to a file outside", func(t *testing.T, out, secret string) string {
		relink(t, secret, filepath.Join(out, "terraform/base/versions.tf"))
		return "terraform/base/versions.tf is a symbolic link"
	}},
	{"relative link out of the tree", func(t *testing.T, out, secret string) string {
		relink(t, "../../../secret.txt", filepath.Join(out, "terraform/base/versions.tf"))
		return "terraform/base/versions.tf is a symbolic link"
	}},
	{"link inside the tree", func(t *testing.T, out, secret string) string {
		relink(t, "variables.tf", filepath.Join(out, "terraform/base/versions.tf"))
		return "terraform/base/versions.tf is a symbolic link"
	}},
	{"link to the environment", func(t *testing.T, out, secret string) string {
		relink(t, "/proc/self/environ", filepath.Join(out, "terraform/base/outputs.tf"))
		return "terraform/base/outputs.tf is a symbolic link"
	}},
	{"link to /dev/zero", func(t *testing.T, out, secret string) string {
		relink(t, "/dev/zero", filepath.Join(out, "helm/base/dcgm-exporter.values.yaml"))
		return "helm/base/dcgm-exporter.values.yaml is a symbolic link"
	}},
	{"link to a kubeconfig", func(t *testing.T, out, secret string) string {
		kube := filepath.Join(filepath.Dir(secret), ".kube", "config")
		if err := os.MkdirAll(filepath.Dir(kube), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(kube, []byte(sentinelFile), 0o600); err != nil {
			t.Fatal(err)
		}
		relink(t, kube, filepath.Join(out, "manifests/base/kueue.yaml"))
		return "manifests/base/kueue.yaml is a symbolic link"
	}},
	{"FIFO at a file", func(t *testing.T, out, secret string) string {
		p := filepath.Join(out, "terraform/base/variables.tf")
		os.Remove(p)
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Skip("mkfifo:", err)
		}
		return "terraform/base/variables.tf is a FIFO"
	}},
	{"folder at a file", func(t *testing.T, out, secret string) string {
		p := filepath.Join(out, "terraform/base/node_pools.tf")
		os.Remove(p)
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return "terraform/base/node_pools.tf is a folder"
	}},
	{"linked folder", func(t *testing.T, out, secret string) string {
		elsewhere := filepath.Join(filepath.Dir(secret), "elsewhere")
		if err := os.Mkdir(elsewhere, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(elsewhere, "kueue.yaml"), []byte(sentinelFile), 0o644); err != nil {
			t.Fatal(err)
		}
		relink(t, elsewhere, filepath.Join(out, "manifests/base"))
		return "manifests/base is a symbolic link"
	}},
	{"file too large", func(t *testing.T, out, secret string) string {
		big := bytes.Repeat([]byte(sentinelFile+"\n"), (5<<20)/len(sentinelFile))
		if err := os.WriteFile(filepath.Join(out, "terraform/base/versions.tf"), big, 0o644); err != nil {
			t.Fatal(err)
		}
		return "terraform/base/versions.tf is larger than 4 MiB"
	}},
	{"manifest lists a link", func(t *testing.T, out, secret string) string {
		if err := os.Symlink(secret, filepath.Join(out, "terraform/base/main.tf")); err != nil {
			t.Fatal(err)
		}
		appendLine(t, filepath.Join(out, ".gpuctl-files"), "terraform/base/main.tf")
		return "terraform/base/main.tf is a symbolic link"
	}},
	{"manifest lists an absolute path", func(t *testing.T, out, secret string) string {
		appendLine(t, filepath.Join(out, ".gpuctl-files"), secret)
		return `.gpuctl-files:26 names "/`
	}},
	{"manifest lists ..", func(t *testing.T, out, secret string) string {
		appendLine(t, filepath.Join(out, ".gpuctl-files"), "terraform/../../secret.txt")
		return `.gpuctl-files:26 names "terraform/../../secret.txt", a path through ".." out of the tree`
	}},
	{"manifest a link", func(t *testing.T, out, secret string) string {
		relink(t, secret, filepath.Join(out, ".gpuctl-files"))
		return ".gpuctl-files is a symbolic link"
	}},
	{"manifest a FIFO", func(t *testing.T, out, secret string) string {
		p := filepath.Join(out, ".gpuctl-files")
		os.Remove(p)
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Skip("mkfifo:", err)
		}
		return ".gpuctl-files is a FIFO"
	}},
}

// TestHostileOutTree: plan --out, generate --check and generate over each
// hostile tree exit 2 naming the path; the sentinel in the file outside and
// in the environment never reaches stdout or stderr, and generate changes
// nothing (neither in the tree nor outside).
func TestHostileOutTree(t *testing.T) {
	t.Setenv("GPUCTL_TEST_SECRET", sentinelEnv)
	for _, c := range hostileTrees {
		t.Run(c.name, func(t *testing.T) {
			out, secret := generated(t)
			want := c.edit(t, out, secret)
			before, beforeAll := snapshot(t, out), snapshot(t, filepath.Dir(out))
			runs := [][]string{
				{"plan", outSpec, "--as-of", planAsOf, "--out", out},
				{"generate", "all", outSpec, "--as-of", planAsOf, "--out", out, "--check"},
				{"generate", "all", outSpec, "--as-of", planAsOf, "--out", out},
			}
			for _, args := range runs {
				code, stdout, stderr := gpuctl(t, args...)
				if code != ExitUsage {
					t.Errorf("%s: exit %d, want 2\n%s", strings.Join(args[:2], " "), code, stderr)
				}
				if !strings.Contains(stderr, want) {
					t.Errorf("%s: stderr does not say %q:\n%s", strings.Join(args[:2], " "), want, stderr)
				}
				for _, s := range []string{"SENTINEL-", "root:"} {
					if strings.Contains(stdout, s) || strings.Contains(stderr, s) {
						t.Errorf("%s: output holds %q", strings.Join(args[:2], " "), s)
					}
				}
			}
			if d := cmp.Diff(before, snapshot(t, out)); d != "" {
				t.Errorf("the tree changed (-before +after):\n%s", d)
			}
			if d := cmp.Diff(beforeAll, snapshot(t, filepath.Dir(out))); d != "" {
				t.Errorf("the folder around the tree changed (-before +after):\n%s", d)
			}
		})
	}
}

// TestManifestDigests: .gpuctl-files lists each file generate wrote with
// the SHA-256 of its content, as sha256sum writes it.
func TestManifestDigests(t *testing.T) {
	out, _ := generated(t)
	data, err := os.ReadFile(filepath.Join(out, ".gpuctl-files"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if strings.HasPrefix(l, "#") {
			continue
		}
		digest, p, ok := strings.Cut(l, "  ")
		if !ok {
			t.Fatalf("line %q is not DIGEST  PATH", l)
		}
		content, err := os.ReadFile(filepath.Join(out, p))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(content)
		if digest != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: digest %s is not its content's", p, digest)
		}
		n++
	}
	if n != 22 { // 16, and the A3 High pool's pod template and Kustomize component (3 files) in both environments
		t.Errorf("%d entries, want the 22 files generated", n)
	}
}

// TestGenerateKeepsUserFiles: a user's terraform/base/main.tf that an
// edited manifest lists (without a digest, or with a wrong one) is never
// deleted, nor a file edited by hand replaced; each is named on stderr.
// A kept stale file leaves the run at exit 0 and the manifest; a kept file
// generate would write exits 3 and stays listed as it was.
func TestGenerateKeepsUserFiles(t *testing.T) {
	out, _ := generated(t)
	mainTF := filepath.Join(out, "terraform/base/main.tf")
	userTF := []byte("resource \"null_resource\" \"mine\" {}\n")
	if err := os.WriteFile(mainTF, userTF, 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(out, "terraform/dev/other.tf")
	if err := os.WriteFile(other, userTF, 0o644); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(out, ".gpuctl-files")
	appendLine(t, manifest, "terraform/base/main.tf")
	appendLine(t, manifest, strings.Repeat("0", 64)+"  terraform/dev/other.tf")

	code, _, stderr := gpuctl(t, "generate", "all", outSpec, "--as-of", planAsOf, "--out", out)
	if code != ExitOK {
		t.Fatalf("exit %d, want 0\n%s", code, stderr)
	}
	for _, p := range []string{mainTF, other} {
		if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, userTF) {
			t.Errorf("%s: %q, %v; want the user's file kept", p, got, err)
		}
		if !strings.Contains(stderr, "warning: kept "+p) {
			t.Errorf("stderr does not name %s:\n%s", p, stderr)
		}
	}
	data, _ := os.ReadFile(manifest)
	if strings.Contains(string(data), "main.tf") || strings.Contains(string(data), "other.tf") {
		t.Errorf("the kept files are still listed:\n%s", data)
	}

	// A hand edit of a generated file is kept: warning, exit 3, listed
	// with the digest gpuctl wrote, and --check still differs.
	pools := filepath.Join(out, "terraform/base/node_pools.tf")
	appendLine(t, pools, "# edited by hand")
	edited, _ := os.ReadFile(pools)
	code, _, stderr = gpuctl(t, "generate", "all", outSpec, "--as-of", planAsOf, "--out", out)
	if code != ExitCheckFailed || !strings.Contains(stderr, "warning: kept "+pools) {
		t.Errorf("exit %d, want 3 with a warning naming %s:\n%s", code, pools, stderr)
	}
	if got, _ := os.ReadFile(pools); !bytes.Equal(got, edited) {
		t.Errorf("the hand edit was replaced")
	}
	code, stdout, _ := gpuctl(t, "generate", "all", outSpec, "--as-of", planAsOf, "--out", out, "--check")
	if code != ExitCheckFailed || !strings.Contains(stdout, "differs  terraform/base/node_pools.tf") {
		t.Errorf("--check: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = gpuctl(t, "plan", outSpec, "--as-of", planAsOf, "--out", out)
	if code != ExitCheckFailed || !strings.Contains(stdout, "! generate keeps it as it is") {
		t.Errorf("plan: exit %d, want 3 marking the file kept\n%s", code, stdout)
	}
	// Removed, it is gpuctl's to write again.
	os.Remove(pools)
	if code, _, stderr := gpuctl(t, "generate", "all", outSpec, "--as-of", planAsOf, "--out", out); code != ExitOK {
		t.Errorf("after removing the edit: exit %d\n%s", code, stderr)
	}
}

// TestGenerateOlderManifest: a manifest of paths only (an older gpuctl):
// a listed file that holds what this version writes is gpuctl's again
// (listed with its digest after the run); a stale listed file is kept,
// since gpuctl cannot tell it wrote it.
func TestGenerateOlderManifest(t *testing.T) {
	out, _ := generated(t)
	manifest := filepath.Join(out, ".gpuctl-files")
	data, _ := os.ReadFile(manifest)
	var old []string
	for _, l := range strings.Split(string(data), "\n") {
		if _, p, ok := strings.Cut(l, "  "); ok && !strings.HasPrefix(l, "#") {
			l = p
		}
		old = append(old, l)
	}
	stale := filepath.Join(out, "terraform/base/stale.tf")
	os.WriteFile(stale, []byte("# gpuctl once wrote this\n"), 0o644)
	old = append(old[:len(old)-1], "terraform/base/stale.tf", "")
	if err := os.WriteFile(manifest, []byte(strings.Join(old, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := gpuctl(t, "generate", "all", outSpec, "--as-of", planAsOf, "--out", out)
	if code != ExitOK || !strings.Contains(stderr, "warning: kept "+stale) {
		t.Errorf("exit %d, want 0 and a warning naming %s:\n%s", code, stale, stderr)
	}
	if _, err := os.Stat(stale); err != nil {
		t.Errorf("the stale file of an older manifest was removed: %v", err)
	}
	if code, _, stderr := gpuctl(t, "generate", "all", outSpec, "--as-of", planAsOf, "--out", out, "--check"); code != ExitOK {
		t.Errorf("--check after the run: exit %d\n%s", code, stderr)
	}
}

// TestStagingLeavesTreeOnError: a run that fails at any move into place
// puts everything back: the tree is exactly as it was, with no staging
// folder left.
func TestStagingLeavesTreeOnError(t *testing.T) {
	out, _ := generated(t)
	before := snapshot(t, out)
	files := []genFile{
		{Path: "terraform/base/versions.tf", Data: []byte("new versions\n")},
		{Path: "terraform/new/node_pools.tf", Data: []byte("new env\n")},
		{Path: "helm/deep/er/x.values.yaml", Data: []byte("x: 1\n")},
		{Path: manifestName, Data: []byte("new manifest\n")},
	}
	remove := []string{"terraform/dev/node_pools.tf", "helm/base/dcgm-exporter.values.yaml"}
	for fail := 1; ; fail++ {
		s, err := newStager(out)
		if err != nil {
			t.Fatal(err)
		}
		calls := 0
		s.rename = func(o, n string) error {
			calls++
			if calls == fail {
				return &os.LinkError{Op: "rename", Old: o, New: n, Err: syscall.EACCES}
			}
			return s.root.Rename(o, n)
		}
		err = s.apply(context.Background(), files, remove)
		s.close()
		if err == nil {
			if fail < 5 {
				t.Fatalf("the run succeeded with a failure at rename %d", fail)
			}
			break // every rename was tried once
		}
		if !errors.Is(err, syscall.EACCES) {
			t.Fatalf("rename %d: %v", fail, err)
		}
		if d := cmp.Diff(before, snapshot(t, out)); d != "" {
			t.Fatalf("failure at rename %d changed the tree (-before +after):\n%s", fail, d)
		}
	}
	// The run that succeeded wrote and removed, and left no staging.
	if got, _ := os.ReadFile(filepath.Join(out, "terraform/new/node_pools.tf")); string(got) != "new env\n" {
		t.Errorf("new file %q", got)
	}
	if _, err := os.Lstat(filepath.Join(out, "terraform/dev/node_pools.tf")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("removed file: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(out, plan.StagingName)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("staging folder left: %v", err)
	}
}

// TestStagingWriteFailure: a file that cannot be staged (here: the
// staging folder cannot hold it) fails before anything moves.
func TestStagingWriteFailure(t *testing.T) {
	out, _ := generated(t)
	before := snapshot(t, out)
	s, err := newStager(out)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	files := []genFile{{Path: "terraform/base/versions.tf", Data: []byte("new\n")}, {Path: "terraform/base/versions.tf", Data: []byte("twice\n")}}
	if err := s.apply(context.Background(), files, nil); err == nil {
		t.Fatal("staging the same file twice succeeded")
	}
	if d := cmp.Diff(before, snapshot(t, out)); d != "" {
		t.Errorf("the tree changed (-before +after):\n%s", d)
	}
}

// TestOutIsAFile: --out naming a file is a usage error naming the flag,
// for generate, generate --check and plan.
func TestOutIsAFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "out.txt")
	if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"generate", "all", outSpec, "--as-of", planAsOf, "--out", f},
		{"generate", "all", outSpec, "--as-of", planAsOf, "--out", f, "--check"},
		{"plan", outSpec, "--as-of", planAsOf, "--out", f},
	} {
		code, _, stderr := gpuctl(t, args...)
		if code != ExitUsage || !strings.Contains(stderr, "--out "+f+": is a file, want a folder") {
			t.Errorf("%s: exit %d, want 2 naming the flag:\n%s", args[0], code, stderr)
		}
		if got, _ := os.ReadFile(f); string(got) != "x" {
			t.Errorf("%s wrote the file", args[0])
		}
	}
}

// TestStagingCancel: an interrupt while files are staged stops the run
// with the context's error; nothing moved, no staging folder left.
func TestStagingCancel(t *testing.T) {
	out, _ := generated(t)
	before := snapshot(t, out)
	s, err := newStager(out)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = s.apply(ctx, []genFile{{Path: "terraform/base/versions.tf", Data: []byte("new\n")}}, []string{"terraform/dev/node_pools.tf"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if d := cmp.Diff(before, snapshot(t, out)); d != "" {
		t.Errorf("the tree changed (-before +after):\n%s", d)
	}
}

// TestGenerateUnwritableFolder: a folder of the tree generate cannot write
// (not as root, which may write anyway) fails the run after files moved
// into place elsewhere; they are moved back and the tree is as it was.
func TestGenerateUnwritableFolder(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes into a read-only folder")
	}
	out, _ := generated(t)
	locked := filepath.Join(out, "terraform", "base")
	before := snapshot(t, out)
	if err := os.Chmod(locked, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(locked, 0o755)
	code, _, stderr := gpuctl(t, "generate", "all", outSpec, "--as-of", planAsOf, "--out", out)
	if code == ExitOK {
		t.Fatalf("generate into a read-only folder succeeded:\n%s", stderr)
	}
	os.Chmod(locked, 0o755)
	if d := cmp.Diff(before, snapshot(t, out)); d != "" {
		t.Errorf("the tree changed (-before +after):\n%s", d)
	}
}

// TestOutIsALink: an --out that is a symbolic link (a checked-out tree a
// pull request replaced) is refused for generate, --check and plan, and
// nothing is written where it points.
func TestOutIsALink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.Mkdir(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "generated")
	if err := os.Symlink("victim", link); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"generate", "all", outSpec, "--as-of", planAsOf, "--out", link},
		{"generate", "all", outSpec, "--as-of", planAsOf, "--out", link, "--check"},
		{"plan", outSpec, "--as-of", planAsOf, "--out", link},
	} {
		code, _, stderr := gpuctl(t, args...)
		if code != ExitUsage || !strings.Contains(stderr, "is a symbolic link") {
			t.Errorf("%v: exit %d, %s", args, code, stderr)
		}
	}
	if ents, _ := os.ReadDir(victim); len(ents) != 0 {
		t.Errorf("wrote %d entries through the link", len(ents))
	}
}
