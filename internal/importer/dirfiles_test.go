package importer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDirFiles: a folder without .tf files is told file by file (specs
// with their bytes, Karpenter, the rest skipped with a reason that quotes
// no content); one with .tf files is Terraform; a link out of the folder
// is not read.
func TestDirFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("a.yaml", "apiVersion: gpuctl.dev/v1alpha1\nkind: ClusterSpec\nmetadata: {name: a}\n")
	write("b.yml", "apiVersion: karpenter.sh/v1\nkind: NodePool\n")
	write("c.yaml", "apiVersion: gpuctl.dev/v1alpha1 # a comment\nkind: Policy\n")
	write("d.yaml", "SECRETVALUE: 1\n")
	write("e.yaml", "deployment_groups: []\n")
	write("notes.md", "apiVersion: gpuctl.dev/v1alpha1\n")
	outside := filepath.Join(t.TempDir(), "x.yaml")
	if err := os.WriteFile(outside, []byte("apiVersion: gpuctl.dev/v1alpha1\nkind: ClusterSpec\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "f.yaml")); err != nil {
		t.Fatal(err)
	}
	tf, files, err := DirFiles(dir, dir)
	if err != nil || tf {
		t.Fatalf("DirFiles: terraform %v, %v", tf, err)
	}
	want := map[string]string{"a.yaml": FromSpec, "b.yml": FromKarpenter, "c.yaml": "", "d.yaml": "", "e.yaml": "", "f.yaml": ""}
	if len(files) != len(want) {
		t.Fatalf("%d files, want %d: %+v", len(files), len(want), files)
	}
	for _, f := range files {
		name := filepath.Base(f.File)
		if f.From != want[name] || (f.From == "") != (f.Reason != "") || strings.Contains(f.Reason, "SECRETVALUE") {
			t.Errorf("%s: from %q reason %q, want from %q", name, f.From, f.Reason, want[name])
		}
		if (f.From == FromSpec) != (len(f.Data) > 0) {
			t.Errorf("%s: %d bytes of data", name, len(f.Data))
		}
	}
	write("main.tf", "")
	if tf, files, err := DirFiles(dir, dir); err != nil || !tf || files != nil {
		t.Errorf("with main.tf: terraform %v, files %v, %v", tf, files, err)
	}
}
