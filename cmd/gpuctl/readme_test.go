package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeConsoleBlocks runs every ```console block of README.md, Quick
// start first to last, and then those of the manuals in docs/ (README
// first, so the build of its Quick start serves them): each "$ " line is a command and the lines under it
// are its output (stdout and stderr). A line "..." stands for any number of
// lines, a line ending in "..." for any line that starts with the rest.
// `go build -o bin/gpuctl ./cmd/gpuctl` builds the binary (into a temporary
// folder, for the later bin/gpuctl and gpuctl commands), `export K=V` sets
// the environment of the commands after it (`export K=$(mktemp -d)`: a new
// temporary folder), $K in a gpuctl command's arguments is K's value, and
// `echo $?` prints the last exit status. Any other command fails the test: the README must show only
// what this test can check.
func TestReadmeConsoleBlocks(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := docBlocks(root)
	if err != nil {
		t.Fatal(err)
	}
	quick := 0
	for _, b := range blocks {
		if b.section == "Quick start" {
			quick += len(b.steps)
		}
	}
	if quick < 3 {
		t.Fatalf("README's Quick start has %d console commands; want the build and at least two gpuctl runs", quick)
	}
	bin := filepath.Join(t.TempDir(), "gpuctl")
	built := false
	env := append(os.Environ(), "NO_COLOR=1", "HOME="+t.TempDir(), "KUBECONFIG=")
	for _, b := range blocks {
		last := 0
		for _, st := range b.steps {
			fields := strings.Fields(st.cmd)
			var out []byte
			switch {
			case st.cmd == "go build -o bin/gpuctl ./cmd/gpuctl":
				c := exec.Command("go", "build", "-o", bin, "./cmd/gpuctl")
				// the user's environment: HOME holds the build and module caches
				c.Dir, c.Env = root, append(os.Environ(), "CGO_ENABLED=0")
				if o, err := c.CombinedOutput(); err != nil {
					t.Fatalf("%s line %d: %s: %v\n%s", b.file, st.line, st.cmd, err, o)
				}
				built = true
			case fields[0] == "export" && len(fields) == 3 && strings.HasSuffix(fields[1], "=$(mktemp") && fields[2] == "-d)":
				env = append(env, strings.TrimSuffix(fields[1], "$(mktemp")+t.TempDir())
			case fields[0] == "export" && len(fields) == 2 && strings.Contains(fields[1], "="):
				env = append(env, fields[1])
			case st.cmd == "echo $?":
				out = []byte(fmt.Sprintf("%d\n", last))
			case fields[0] == "bin/gpuctl" || fields[0] == "gpuctl":
				if !built {
					t.Fatalf("%s line %d: %s runs before the block that builds gpuctl", b.file, st.line, st.cmd)
				}
				if strings.ContainsAny(st.cmd, "'\"|<>;&`") {
					t.Fatalf("%s line %d: %q needs a shell; show plain arguments", b.file, st.line, st.cmd)
				}
				var buf bytes.Buffer
				args := fields[1:]
				for i := range args {
					args[i] = os.Expand(args[i], func(k string) string { return lookupEnv(env, k) })
				}
				c := exec.Command(bin, args...)
				c.Dir, c.Env, c.Stdout, c.Stderr = root, env, &buf, &buf
				last = 0
				if err := c.Run(); err != nil {
					var ee *exec.ExitError
					if !errors.As(err, &ee) {
						t.Fatalf("%s line %d: %v", b.file, st.line, err)
					}
					last = ee.ExitCode()
				}
				out = buf.Bytes()
			default:
				t.Fatalf("%s line %d: the test cannot run %q", b.file, st.line, st.cmd)
			}
			got := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
			if len(out) == 0 {
				got = nil
			}
			if !matchLines(st.want, got) {
				t.Errorf("%s line %d: %s\n--- the doc shows:\n%s\n--- it printed:\n%s", b.file, st.line, st.cmd, strings.Join(st.want, "\n"), out)
			}
		}
	}
}

// lookupEnv is the last value of k in env (KEY=VALUE entries), "" when
// none.
func lookupEnv(env []string, k string) string {
	v := ""
	for _, kv := range env {
		if name, val, ok := strings.Cut(kv, "="); ok && name == k {
			v = val
		}
	}
	return v
}

// docBlocks returns the console blocks of README.md and then of the
// hand-written manuals docs/*.md (not the generated gpuctl*.md reference),
// in name order, each block with its file.
func docBlocks(root string) ([]consoleBlock, error) {
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		return nil, err
	}
	blocks := consoleBlocks(string(readme))
	for i := range blocks {
		blocks[i].file = "README.md"
	}
	manuals, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	for _, m := range manuals {
		if strings.HasPrefix(filepath.Base(m), "gpuctl") {
			continue
		}
		b, err := os.ReadFile(m)
		if err != nil {
			return nil, err
		}
		for _, cb := range consoleBlocks(string(b)) {
			cb.file = "docs/" + filepath.Base(m)
			blocks = append(blocks, cb)
		}
	}
	return blocks, nil
}

type consoleStep struct {
	line int
	cmd  string
	want []string
}

type consoleBlock struct {
	file    string // README.md or docs/NAME.md
	section string
	steps   []consoleStep
}

// consoleBlocks returns the ```console blocks of a Markdown text with the
// "## " section each is in.
func consoleBlocks(md string) []consoleBlock {
	var out []consoleBlock
	section := ""
	var cur *consoleBlock
	for i, l := range strings.Split(md, "\n") {
		switch {
		case cur == nil && strings.HasPrefix(l, "## "):
			section = strings.TrimPrefix(l, "## ")
		case cur == nil && strings.TrimSpace(l) == "```console":
			cur = &consoleBlock{section: section}
		case cur != nil && strings.TrimSpace(l) == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil && strings.HasPrefix(l, "$ "):
			cur.steps = append(cur.steps, consoleStep{line: i + 1, cmd: strings.TrimSpace(strings.TrimPrefix(l, "$ "))})
		case cur != nil && len(cur.steps) > 0:
			s := &cur.steps[len(cur.steps)-1]
			s.want = append(s.want, strings.TrimRight(l, " "))
		}
	}
	return out
}

// matchLines matches got against want, where "..." is any run of lines and
// a line ending in "..." matches by its prefix.
func matchLines(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if want[0] == "..." {
		for i := 0; i <= len(got); i++ {
			if matchLines(want[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	if len(got) == 0 {
		return false
	}
	w, g := want[0], strings.TrimRight(got[0], " ")
	if p, ok := strings.CutSuffix(w, "..."); ok {
		if !strings.HasPrefix(g, p) {
			return false
		}
	} else if w != g {
		return false
	}
	return matchLines(want[1:], got[1:])
}

func TestMatchLines(t *testing.T) {
	for _, c := range []struct {
		want, got []string
		ok        bool
	}{
		{[]string{"a", "...", "z"}, []string{"a", "b", "c", "z"}, true},
		{[]string{"a", "...", "z"}, []string{"a", "z"}, true},
		{[]string{"a", "z"}, []string{"a", "b", "z"}, false},
		{[]string{"ab..."}, []string{"abc"}, true},
		{[]string{"ab..."}, []string{"xbc"}, false},
		{[]string{"3"}, []string{"4"}, false},
		{nil, []string{"x"}, false},
	} {
		if got := matchLines(c.want, c.got); got != c.ok {
			t.Errorf("matchLines(%q, %q) = %v, want %v", c.want, c.got, got, c.ok)
		}
	}
}
