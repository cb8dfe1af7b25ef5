package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The committed reference in docs/ is what `make docs` writes from the
// command tree today: every page there, and no stale page (the hand-written
// manuals beside it, docs/*.md not named gpuctl*, are not the reference).
func TestDocsAreCurrent(t *testing.T) {
	streams, _, _, _ := TestStreams()
	tmp := t.TempDir()
	if err := writeDocs(NewRootCommand(streams), tmp); err != nil {
		t.Fatal(err)
	}
	committed := filepath.Join("..", "..", DocsDir)
	want, got := listFiles(t, tmp), listFiles(t, committed)
	if len(want) < 20 {
		t.Fatalf("writeDocs wrote %d files; expected a page per command", len(want))
	}
	stale := false
	for name := range want {
		if _, ok := got[name]; !ok {
			t.Errorf("docs/%s is missing", name)
			stale = true
		}
	}
	for name, data := range got {
		if !generatedDoc(name) {
			continue
		}
		w, ok := want[name]
		switch {
		case !ok:
			t.Errorf("docs/%s is not generated any more", name)
			stale = true
		case !bytes.Equal(w, data):
			t.Errorf("docs/%s differs from what the command tree gives", name)
			stale = true
		}
	}
	if stale {
		t.Log("run `make docs` and commit docs/")
	}
}

// listFiles returns the regular files under dir by their slash path.
func listFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// generatedDoc reports whether a slash path under docs/ is a page `make
// docs` writes: the Markdown reference gpuctl*.md and the man pages.
func generatedDoc(name string) bool {
	return strings.HasPrefix(name, "man/") || strings.HasPrefix(name, "gpuctl")
}
