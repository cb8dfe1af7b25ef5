package main

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// repoRoot is the repository root, relative to this package.
const repoRoot = "../.."

// outsidePath matches the ways a file can point at the material that sits
// beside a checkout (the folder "shared" next to the repository root) instead
// of the repository's own copies: the relative path, its environment
// variable, and a path joined (filepath.Join) from ".." and that folder's
// name. It is built from pieces so that this file does not match it. Words
// such as "shared memory" or "nvidia.com/gpu.shared" are not paths and do
// not match.
var outsidePath = func() *regexp.Regexp {
	dir := "sha" + "red"
	env := strings.ToUpper(dir)
	return regexp.MustCompile(strings.Join([]string{
		`\.\.[/\\]` + dir + `\b`,                       // relative path
		`\$\{?` + env + `\b`,                           // $VAR, ${VAR
		`\b` + env + `\}`,                              // ...VAR}
		`"` + env + `"`,                                // Getenv("VAR"), Setenv("VAR", ...)
		`"\.\."\s*,\s*"` + dir + `"`,                   // filepath.Join("..", "dir", ...)
		`\b` + dir + `/(corpus|reference|cases|k8s)\b`, // a path into it without the leading ..
	}, "|"))
}()

func TestOutsidePathPattern(t *testing.T) {
	dir := "sha" + "red"
	env := strings.ToUpper(dir)
	for _, s := range []string{
		"cp ../" + dir + "/corpus/x.txt .",
		`os.ReadFile("../../../` + dir + `/cases/CASES.md")`,
		"cri() { crif \"$" + env + "/corpus/$1\"; }",
		"X=${" + env + ":-$ROOT/.." + `\` + dir + "}",
		`env.Setenv("` + env + `", wd)`,
		`filepath.Join("..", "..", "..", "` + dir + `", "corpus", name)`,
		"see " + dir + "/reference/helm-keys/",
	} {
		if !outsidePath.MatchString(s) {
			t.Errorf("not matched: %q", s)
		}
	}
	for _, s := range []string{
		"NCCL hit a system error (" + dir + " memory, sockets)",
		"resource nvidia.com/gpu." + dir,
		"NCCL_NET_" + env + "_BUFFERS, NCCL_NET_" + env + "_COMMS",
		"max_" + dir + "_clients_per_gpu = 4",
		"var " + dir + " []string",
		"libnvidia-ml.so.1: cannot open " + dir + " object file",
		"cp $TESTDATA/corpus/x.txt .",
		`os.ReadFile("../../testdata/cases/CASES.md")`,
	} {
		if outsidePath.MatchString(s) {
			t.Errorf("matched: %q", s)
		}
	}
}

// TestSelfContained fails when a tracked file other than documentation (*.md)
// points outside the repository at the material beside a checkout: tests,
// scripts and CI must run from a clone alone. CI has that material beside
// its checkout, so without this test a dependency on it would go unnoticed.
func TestSelfContained(t *testing.T) {
	files := trackedFiles(t)
	if len(files) < 50 {
		t.Fatalf("only %d files found under %s", len(files), repoRoot)
	}
	seen := map[string]bool{}
	for _, name := range files {
		seen[name] = true
		if strings.HasSuffix(name, ".md") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(name)))
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the work tree, not yet in the index
			}
			t.Fatal(err)
		}
		for i, line := range bytes.Split(data, []byte("\n")) {
			if m := outsidePath.Find(line); m != nil {
				t.Errorf("%s:%d refers to %q outside the repository: use the copies in testdata/ or hack/k8s/", name, i+1, m)
			}
		}
	}
	// The scan covered the files that used to depend on that material.
	for _, name := range []string{"Makefile", ".ci/run", "hack/e2e.sh", "cmd/gpuctl/main_test.go", "testdata/script/parse_ok.txtar", "internal/probe/helpers_test.go"} {
		if !seen[name] {
			t.Errorf("%s was not scanned", name)
		}
	}
}

// trackedFiles lists the repository's tracked files, and the new ones git
// does not ignore (slash-separated, relative to the root), with git; or, where git or the repository's .git is missing
// (an exported source tree), every file below the root except .git and the
// build outputs that .gitignore names.
func trackedFiles(t *testing.T) []string {
	t.Helper()
	if _, err := exec.LookPath("git"); err == nil {
		cmd := exec.Command("git", "-C", repoRoot, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
		if out, err := cmd.Output(); err == nil {
			var files []string
			for _, f := range strings.Split(string(out), "\x00") {
				if f != "" {
					files = append(files, f)
				}
			}
			return files
		}
	}
	var files []string
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(repoRoot, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch rel {
			case ".git", "bin", "dist", "gpuctl-evidence":
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && !strings.HasSuffix(rel, ".test") && !strings.HasSuffix(rel, ".out") && rel != "gpuctl" {
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
