package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	failed []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.failed = append(r.failed, "error")
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = append(r.failed, "fatal")
	panic(r)
}
func (r *recorder) Fatal(args ...any) { r.Fatalf("") }

func run(f func(r *recorder)) (r *recorder) {
	r = &recorder{}
	defer func() {
		if p := recover(); p != nil && p != r {
			panic(p)
		}
	}()
	f(r)
	return r
}

func TestCompare(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sub", "file.txt")
	if r := run(func(r *recorder) { Compare(r, path, []byte("a\n"), false) }); len(r.failed) != 1 {
		t.Errorf("a missing golden file must fail the test: %v", r.failed)
	}
	if r := run(func(r *recorder) { Compare(r, path, []byte("a\n"), true) }); len(r.failed) != 0 {
		t.Errorf("-update must write the file: %v", r.failed)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "a\n" {
		t.Fatalf("-update wrote %q, %v", b, err)
	}
	if r := run(func(r *recorder) { Compare(r, path, []byte("a\n"), false) }); len(r.failed) != 0 {
		t.Errorf("equal content must pass: %v", r.failed)
	}
	if r := run(func(r *recorder) { Compare(r, path, []byte("b\n"), false) }); len(r.failed) != 1 {
		t.Errorf("different content must fail: %v", r.failed)
	}
}

func TestValidExamples(t *testing.T) {
	t.Parallel()
	asOf := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	exs := ValidExamples(t, "../../examples/*.yaml", asOf)
	seen := map[string]bool{}
	for _, ex := range exs {
		seen[ex.Name] = true
		if ex.Spec == nil || !strings.HasPrefix(ex.Dir, ex.Name+string(filepath.Separator)) {
			t.Errorf("example %+v: no spec or a folder outside its name", ex)
		}
		if strings.HasSuffix(ex.Name, "-as-written") {
			t.Errorf("%s has error findings (by design) and must not be a valid example", ex.Name)
		}
	}
	if !seen["gke-h100-l4"] {
		t.Errorf("the shipped example gke-h100-l4 must be valid: %v", seen)
	}
	for _, bad := range []string{"[", filepath.Join(t.TempDir(), "*.yaml")} {
		if r := run(func(r *recorder) { ValidExamples(r, bad, asOf) }); len(r.failed) != 1 {
			t.Errorf("pattern %q: want one failure, got %v", bad, r.failed)
		}
	}
}
