package cli

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// secretVolume lays out dir as the kubelet's atomic writer fills a Secret
// volume with key KEY: ..2026_12_03_13_37_18.1234567890/KEY (mode),
// ..data -> that folder, KEY -> ..data/KEY. It returns the path of the
// link KEY.
func secretVolume(t *testing.T, dir string, mode os.FileMode) string {
	t.Helper()
	ts := "..2026_12_03_13_37_18.1234567890"
	if err := os.Mkdir(filepath.Join(dir, ts), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, ts, "accept.key")
	if err := os.WriteFile(file, []byte("-----BEGIN PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(file, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ts, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "accept.key")
	if err := os.Symlink(filepath.Join("..data", "accept.key"), link); err != nil {
		t.Fatal(err)
	}
	return link
}

// TestPrivateKeyModeSecretVolume: a group-readable key (0440, as the
// kubelet leaves a Secret's file with fsGroup) is accepted when it is a
// file of a Secret volume's layout, by the link, through ..data, or by a
// link elsewhere to it; refused when group-writable or readable by others
// there, and refused anywhere else, including a folder that only looks
// like the layout (no ..data link to the folder).
func TestPrivateKeyModeSecretVolume(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no POSIX modes")
	}
	t.Parallel()
	vol := secretVolume(t, t.TempDir(), 0o440)
	elsewhere := filepath.Join(t.TempDir(), "k.key")
	if err := os.Symlink(vol, elsewhere); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(t.TempDir(), "accept.key")
	if err := os.WriteFile(plain, []byte("k"), 0o440); err != nil {
		t.Fatal(err)
	}
	noData := t.TempDir()
	fake := filepath.Join(noData, "..2026_12_03_13_37_18.1", "accept.key")
	if err := os.MkdirAll(filepath.Dir(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fake, []byte("k"), 0o440); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("elsewhere", filepath.Join(noData, "..data")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path, want string
	}{
		{"secret volume, the key's link", vol, ""},
		{"secret volume, through ..data", filepath.Join(filepath.Dir(vol), "..data", "accept.key"), ""},
		{"a link elsewhere to the secret's key", elsewhere, ""},
		{"secret volume, group-writable", secretVolume(t, t.TempDir(), 0o460), "(mode 0460); a private key mounted from a Secret may be readable by its group (fsGroup), nothing more"},
		{"secret volume, readable by others", secretVolume(t, t.TempDir(), 0o444), "(mode 0444); a private key mounted from a Secret"},
		{"a plain file", plain, "(mode 0440); a private key must be readable only by its owner: chmod 600 " + plain},
		{"..data pointing elsewhere", fake, "(mode 0440); a private key must be readable only by its owner"},
	} {
		err := checkPrivateKeyMode(c.path)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want accepted", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if err := checkPrivateKeyMode(secretVolume(t, t.TempDir(), 0o400)); err != nil {
		t.Errorf("a secret's 0400 key: %v", err)
	}
}

// TestAcceptKeyFromSecretVolume: accept signs with gpuctl keygen's key
// mounted as the kubelet mounts the sweep's Secret with fsGroup (0440),
// and refuses the same key, same mode, in a plain folder (exit 2).
func TestAcceptKeyFromSecretVolume(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no POSIX modes")
	}
	t.Parallel()
	keyDir := t.TempDir()
	streams, _, _, errOut := TestStreams()
	if code := RunWithFactory(t.Context(), []string{"keygen", "--out", filepath.Join(keyDir, "k")}, streams, NewFactory()); code != 0 {
		t.Fatalf("keygen: exit %d: %s", code, errOut)
	}
	pemBytes, err := os.ReadFile(filepath.Join(keyDir, "k.key"))
	if err != nil {
		t.Fatal(err)
	}
	vol := secretVolume(t, t.TempDir(), 0o600)
	if err := os.WriteFile(vol, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(vol, 0o440); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(keyDir, "k.key")
	if err := os.Chmod(plain, 0o440); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key    string
		code   int
		stderr string
	}{{vol, 0, ""}, {plain, ExitUsage, "(mode 0440); a private key must be readable only by its owner"}} {
		streams, _, _, errOut := TestStreams()
		args := []string{"accept", "--dry-run", "--gpus", "8", "--key", c.key, "-o", "yaml"}
		if code := RunWithFactory(t.Context(), args, streams, NewFactory()); code != c.code || !strings.Contains(errOut.String(), c.stderr) {
			t.Errorf("--key %s: exit %d, want %d and %q: %s", c.key, code, c.code, c.stderr, errOut)
		}
	}
}
