package plan

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuctl/gpuctl/internal/check"
)

// TestParseManifest: both formats read (a digest line and an older path
// line), comments and blank lines skipped, a duplicate kept once, and every
// line naming a path outside the tree refused by line number.
func TestParseManifest(t *testing.T) {
	d := Digest([]byte("x\n"))
	src := "# header\n\n" + d + "  terraform/base/a.tf\nterraform/base/b.tf\r\n" + d + "  terraform/base/a.tf\n" +
		"/etc/passwd\n../secret.txt\nterraform/../../x\n./terraform/base/c.tf\nterraform//base/d.tf\n"
	got, problems := parseManifest([]byte(src), "out/.gpuctl-files")
	want := []ManifestEntry{{"terraform/base/a.tf", d}, {"terraform/base/b.tf", ""}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	wantProblems := []string{
		`out/.gpuctl-files:6 names "/etc/passwd", an absolute path`,
		`out/.gpuctl-files:7 names "../secret.txt", a path through ".." out of the tree`,
		`out/.gpuctl-files:8 names "terraform/../../x", a path through ".." out of the tree`,
		`out/.gpuctl-files:9 names "./terraform/base/c.tf", not a clean slash-separated path inside the tree`,
		`out/.gpuctl-files:10 names "terraform//base/d.tf", not a clean slash-separated path inside the tree`,
	}
	if diff := cmp.Diff(wantProblems, problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	// FormatManifest writes what parseManifest reads back.
	back, problems := parseManifest(FormatManifest(want), "m")
	if len(problems) > 0 || !cmp.Equal(back, want) {
		t.Errorf("round trip: %v %v, want %v", back, problems, want)
	}
}

func TestParseManifestCap(t *testing.T) {
	var b strings.Builder
	for i := 0; i <= MaxManifestEntries; i++ {
		fmt.Fprintf(&b, "terraform/base/f%d.tf\n", i)
	}
	_, problems := parseManifest([]byte(b.String()), "m")
	if len(problems) != 1 || !strings.Contains(problems[0], "more than 10000") {
		t.Errorf("problems %v, want one naming the cap", problems)
	}
}

// TestOwned: gpuctl replaces or removes a file only when the manifest's
// digest is its content's, or (an older manifest, no digest) it already
// holds what this run writes.
func TestOwned(t *testing.T) {
	have := []byte("old\n")
	cases := []struct {
		name string
		f    OutFile
		want bool
	}{
		{"missing", OutFile{Want: []byte("new\n")}, true},
		{"unchanged, unlisted", OutFile{Want: have, Have: have, Exists: true}, true},
		{"listed with its digest", OutFile{Want: []byte("new\n"), Have: have, Exists: true, Listed: true, Entry: ManifestEntry{Digest: Digest(have)}}, true},
		{"edited since", OutFile{Want: []byte("new\n"), Have: have, Exists: true, Listed: true, Entry: ManifestEntry{Digest: Digest([]byte("other"))}}, false},
		{"older manifest, differs", OutFile{Want: []byte("new\n"), Have: have, Exists: true, Listed: true}, false},
		{"unlisted, differs", OutFile{Want: []byte("new\n"), Have: have, Exists: true}, false},
		{"stale with its digest", OutFile{Have: have, Exists: true, Listed: true, Entry: ManifestEntry{Digest: Digest(have)}}, true},
		{"stale, older manifest", OutFile{Have: have, Exists: true, Listed: true}, false},
	}
	for _, c := range cases {
		if got := c.f.Owned(); got != c.want {
			t.Errorf("%s: Owned() = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestReadOutRefuses: a link, a folder where a file goes, a link at a
// folder on the way, a listed link, and a link as the manifest make the
// tree untrusted; the error names each path and none of the targets.
func TestReadOutRefuses(t *testing.T) {
	want := []check.File{{Path: "terraform/base/versions.tf", Data: []byte("v\n")}, {Path: "helm/base/x.values.yaml", Data: []byte("x\n")}}
	link := func(target string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte(target), Mode: fs.ModeSymlink}
	}
	cases := []struct {
		name string
		fsys fstest.MapFS
		want string
	}{
		{"link at a file", fstest.MapFS{"terraform/base/versions.tf": link("/etc/shadow")}, "out/terraform/base/versions.tf is a symbolic link"},
		{"folder at a file", fstest.MapFS{"terraform/base/versions.tf/x": {Data: []byte("x")}}, "out/terraform/base/versions.tf is a folder where gpuctl writes a file"},
		{"link at a folder", fstest.MapFS{"helm/base": link("/etc")}, "out/helm/base is a symbolic link where gpuctl writes a folder"},
		{"file at a folder", fstest.MapFS{"helm": {Data: []byte("x")}}, "out/helm is a file where gpuctl writes a folder"},
		{"listed link", fstest.MapFS{check.ManifestName: {Data: []byte("manifests/base/kube.yaml\n")}, "manifests/base/kube.yaml": link("/root/.kube/config")}, "out/manifests/base/kube.yaml is a symbolic link"},
		{"listed link of another run", fstest.MapFS{check.ManifestName: {Data: []byte("notes/env\n")}, "notes/env": link("/proc/self/environ")}, "out/notes/env is a symbolic link"},
		{"manifest a link", fstest.MapFS{check.ManifestName: link("/etc/shadow")}, "out/.gpuctl-files is a symbolic link"},
		{"staging a link", fstest.MapFS{StagingName: link("/tmp")}, "out/.gpuctl-staging is a symbolic link where gpuctl writes a folder"},
		{"too large", fstest.MapFS{"terraform/base/versions.tf": {Data: make([]byte, 4<<20+1)}}, "out/terraform/base/versions.tf is larger than 4 MiB"},
	}
	for _, c := range cases {
		_, err := ReadOut(TreeFS(c.fsys, "out"), want, check.LayerAll, "")
		var te *TreeError
		if !errors.As(err, &te) {
			t.Errorf("%s: error %v, want a *TreeError", c.name, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %q does not say %q", c.name, err, c.want)
		}
		for _, secret := range []string{"/etc/shadow", "/proc/self/environ", ".kube", "/tmp"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("%s: %q names the link's target %s", c.name, err, secret)
			}
		}
	}
}

// TestReadOutScope: wanted files, stale files (listed in scope, on disk)
// and other runs' entries, as generate terraform --env prod sees them.
func TestReadOutScope(t *testing.T) {
	d := Digest([]byte("old\n"))
	fsys := fstest.MapFS{
		check.ManifestName:             {Data: []byte(d + "  terraform/prod/node_pools.tf\nterraform/prod/gone.tf\nterraform/prod/absent.tf\nhelm/prod/x.values.yaml\nterraform/base/node_pools.tf\n")},
		"terraform/prod/node_pools.tf": {Data: []byte("old\n")},
		"terraform/prod/gone.tf":       {Data: []byte("gone\n")},
		"helm/prod/x.values.yaml":      {Data: []byte("x\n")},
	}
	out, err := ReadOut(TreeFS(fsys, "out"), []check.File{{Path: "terraform/prod/node_pools.tf", Data: []byte("new\n")}}, check.LayerTerraform, "prod")
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Files) != 1 || !out.Files[0].Owned() || !out.Files[0].Differs() {
		t.Errorf("files %+v, want node_pools.tf owned and changed", out.Files)
	}
	if len(out.Stale) != 1 || out.Stale[0].Path != "terraform/prod/gone.tf" || out.Stale[0].Owned() {
		t.Errorf("stale %+v, want gone.tf, not owned (no digest)", out.Stale)
	}
	if diff := cmp.Diff([]ManifestEntry{{"helm/prod/x.values.yaml", ""}, {"terraform/base/node_pools.tf", ""}}, out.Others); diff != "" {
		t.Errorf("others (-want +got):\n%s", diff)
	}
}
