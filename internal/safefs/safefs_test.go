package safefs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestReadFileRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.tf")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	for _, p := range []string{fifo, "/dev/zero", dir} {
		_, err := ReadFile(p, Terraform)
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("ReadFile(%s) = %v, want ErrNotRegular", p, err)
		}
	}
}

func TestReadFileCapsProcFiles(t *testing.T) {
	// /proc files stat as 0 bytes: the cap holds on what is read.
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	_, err := ReadFile("/proc/self/status", Kind{"tiny", 16})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	if !strings.Contains(err.Error(), "/proc/self/status") || !strings.Contains(err.Error(), "tiny") {
		t.Errorf("message %q does not name the path and kind", err)
	}
}

func TestRootConfines(t *testing.T) {
	top := t.TempDir()
	secret := filepath.Join(top, "secret.txt")
	must(t, os.WriteFile(secret, []byte("SENTINEL"), 0o600))
	dir := filepath.Join(top, "repo")
	must(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "sub", "ok.txt"), []byte("fine"), 0o644))
	must(t, os.Symlink(secret, filepath.Join(dir, "abs-link")))
	must(t, os.Symlink("../secret.txt", filepath.Join(dir, "rel-link")))
	must(t, os.Symlink("sub/ok.txt", filepath.Join(dir, "inside-link")))
	r, err := OpenRoot(dir)
	must(t, err)
	defer r.Close()
	if b, err := r.ReadFile("sub/ok.txt", Template); err != nil || string(b) != "fine" {
		t.Fatalf("inside: %q, %v", b, err)
	}
	if b, err := r.ReadFile("inside-link", Template); err != nil || string(b) != "fine" {
		t.Fatalf("link inside: %q, %v", b, err)
	}
	for _, name := range []string{"abs-link", "rel-link", "../secret.txt", secret, "sub/../../secret.txt", "/etc/passwd"} {
		b, err := r.ReadFile(name, Template)
		if !errors.Is(err, ErrOutside) {
			t.Errorf("ReadFile(%s) = %q, %v; want ErrOutside", name, b, err)
		}
		if err != nil && strings.Contains(err.Error(), "SENTINEL") {
			t.Errorf("message quotes content: %v", err)
		}
	}
	if _, err := r.Rel(secret); !errors.Is(err, ErrOutside) {
		t.Errorf("Rel(outside) = %v", err)
	}
	if rel, err := r.Rel(filepath.Join(dir, "sub")); err != nil || rel != "sub" {
		t.Errorf("Rel(sub) = %q, %v", rel, err)
	}
}

func TestFindRoot(t *testing.T) {
	top := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(top, "repo", ".git"), 0o755))
	must(t, os.MkdirAll(filepath.Join(top, "repo", "infra", "gpu"), 0o755))
	must(t, os.MkdirAll(filepath.Join(top, "loose", "tf"), 0o755))
	if got, _ := FindRoot(filepath.Join(top, "repo", "infra", "gpu")); got != filepath.Join(top, "repo") {
		t.Errorf("in a repository: %s", got)
	}
	if got, _ := FindRoot(filepath.Join(top, "loose", "tf")); got != filepath.Join(top, "loose", "tf") {
		t.Errorf("outside one: %s", got)
	}
	t.Chdir(filepath.Join(top, "repo", "infra"))
	if got, _ := FindRoot("gpu"); got != ".." {
		t.Errorf("relative: %s, want ..", got)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
