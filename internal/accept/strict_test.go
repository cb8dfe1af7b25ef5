package accept

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gpuctl/gpuctl/internal/record"
	"github.com/gpuctl/gpuctl/internal/safefs"
)

// TestRejudgeRefusesHostileEvidence: run.json with a member twice, spelled
// in another case or with data after it, an edited status file, a node
// file that links out of the evidence folder and a FIFO as run.json are
// refused, naming the file; the evidence as the run wrote it re-judges.
func TestRejudgeRefusesHostileEvidence(t *testing.T) {
	h := newHarness(t, nil)
	run(t, h, succeed)
	dir := h.plan.EvidenceDir
	if _, err := Rejudge(dir, ParserFunc(fakeParser), DefaultBaselines(), "test", rejudgedAt); err != nil {
		t.Fatal(err)
	}
	runJSON, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "node.json")
	if err := os.WriteFile(outside, []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		edit func(t *testing.T, dir string)
		want string
		is   error
	}{
		{"run.json twice", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "run.json"), strings.Replace(string(runJSON), `"runID"`, `"runID": "x", "runID"`, 1))
		}, `run.json: $: member "runID" appears twice`, record.ErrAmbiguousJSON},
		{"run.json case", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "run.json"), strings.Replace(string(runJSON), `"runID"`, `"RunID": "x", "runID"`, 1))
		}, `run.json: $: member "RunID" is not spelled "runID"`, record.ErrAmbiguousJSON},
		{"run.json trailing", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "run.json"), string(runJSON)+`{"runID": "x"}`)
		}, `run.json: $: has data after the JSON value`, record.ErrAmbiguousJSON},
		{"status edited", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "inventory.status.json")
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			write(t, p, string(data)+`{"exitCode": {}}`)
		}, `inventory.status.json: sha256`, ErrEvidenceChanged},
		{"node link", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "kubernetes.node.json")
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, p); err != nil {
				t.Fatal(err)
			}
		}, `kubernetes.node.json: outside the folder`, ErrEvidenceChanged},
		{"run.json FIFO", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "run.json")
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
		}, `run.json: not a regular file (a FIFO)`, safefs.ErrNotRegular},
	} {
		copyDir := t.TempDir()
		copyTree(t, dir, copyDir)
		c.edit(t, copyDir)
		_, err := Rejudge(copyDir, ParserFunc(fakeParser), DefaultBaselines(), "test", rejudgedAt)
		if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyTree copies the regular files of the folder src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dst, e.Name()), string(data))
	}
}

// TestFindPreviousSkipsHostileRecords: a previous record that decoders
// read differently, and a run folder that links out of the evidence
// folder, are not taken for the node's previous record.
func TestFindPreviousSkipsHostileRecords(t *testing.T) {
	dir := t.TempDir()
	s, _ := keyPair(t, "ed25519")
	p := fixturePredicate(t).Predicate
	evd := EvidenceDir(dir, p.Node.Name, p.RunID)
	if err := os.MkdirAll(evd, 0o755); err != nil {
		t.Fatal(err)
	}
	rec, err := WriteRecord(context.Background(), &Result{Predicate: p, EvidenceDir: evd}, s, "")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(rec.Path)
	if err != nil {
		t.Fatal(err)
	}
	later := p.Finished.Add(1e12)
	if prev, err := FindPrevious(dir, p.Node.Name, "other-run", later); err != nil || prev == nil {
		t.Fatalf("the genuine record: %v %v", prev, err)
	}
	write(t, rec.Path, strings.Replace(string(data), `"payload"`, `"PAYLOAD": "e30=", "payload"`, 1))
	if prev, _ := FindPrevious(dir, p.Node.Name, "other-run", later); prev != nil {
		t.Errorf("a case-variant record was taken: %s", prev.Path)
	}
	// The node's folder linked elsewhere, to the genuine record.
	elsewhere := t.TempDir()
	if err := os.MkdirAll(filepath.Join(elsewhere, p.RunID), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(elsewhere, p.RunID, RecordFile), string(data))
	link := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(link, p.Node.Name)); err != nil {
		t.Fatal(err)
	}
	if prev, err := FindPrevious(link, p.Node.Name, "other-run", later); prev != nil || !errors.Is(err, safefs.ErrOutside) {
		t.Errorf("a record outside the folder: %v, %v; want ErrOutside", prev, err)
	}
}

// TestLoadBaselinesRefusesHostileFiles: a FIFO and /dev/zero are refused
// by their mode; a billion-laughs document by the YAML limits, before it
// is expanded.
func TestLoadBaselinesRefusesHostileFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "baselines.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, "/dev/zero"} {
		if _, err := LoadBaselines(p); !errors.Is(err, safefs.ErrNotRegular) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v", p, err)
		}
	}
	laughs := "formatVersion: \"1\"\na: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for i := range 9 {
		name := string(rune('b' + i))
		laughs += name + ": &" + name + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
		prev = name
	}
	p := filepath.Join(t.TempDir(), "laughs.yaml")
	write(t, p, laughs)
	if _, err := LoadBaselines(p); err == nil || !strings.Contains(err.Error(), "aliases expand") {
		t.Errorf("billion laughs: %v", err)
	}
}
