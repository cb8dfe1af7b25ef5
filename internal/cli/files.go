package cli

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"

	"github.com/gpuctl/gpuctl/internal/spec"
)

// readContext runs read (opening and reading a file or stdin) in a goroutine
// and returns when it is done or when ctx is, whichever comes first: a FIFO
// with no writer blocks open(2) and read(2), and must not block Ctrl-C. A
// read left behind ends with the process.
func readContext(ctx context.Context, read func() ([]byte, error)) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	type result struct {
		data []byte
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		data, err := read()
		ch <- result{data, err}
	}()
	select {
	case r := <-ch:
		return r.data, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// errSymlink is a symbolic link where gpuctl writes a file or a folder.
var errSymlink = errors.New("is a symbolic link; gpuctl does not write through links (remove it, or write elsewhere)")

// writeFileAtomic writes data to path through a temporary file in path's
// folder, renamed over path: a reader (or an interrupted run) never sees a
// partial file. It refuses a symbolic link at path rather than writing
// through it, and leaves path with mode.
func writeFileAtomic(path string, data []byte, mode fs.FileMode) error {
	if st, err := os.Lstat(path); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s %w", path, errSymlink)
	} else if err == nil && st.IsDir() {
		return fmt.Errorf("%s is a folder", path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	fail := func(err error) error {
		tmp.Close()
		os.Remove(name)
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		return fail(err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return err
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return err
	}
	return nil
}

// readError is an input that cannot be read: exit 2, without the --help
// hint of a wrong use (the context's error passes through, for Main to map
// to 130/143). A file that does not exist says "(check the path)", as
// validate's message for a missing spec does.
func readError(what string, err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	if errors.Is(err, fs.ErrNotExist) {
		return withCode(ExitUsage, fmt.Errorf("%s: %w (%s)", what, err, spec.HintCheckPath))
	}
	return withCode(ExitUsage, fmt.Errorf("%s: %w", what, err))
}

// isPrivateKeyPEM reports whether data is a PEM private key.
func isPrivateKeyPEM(data []byte) bool {
	block, _ := pem.Decode(data)
	return block != nil && strings.Contains(block.Type, "PRIVATE KEY")
}

// checkPrivateKeyMode refuses a private key file that its group or others
// may read or write, as ssh does: the key signs acceptance records. A key
// mounted from a Kubernetes Secret volume (inSecretVolume) may be readable
// by its group, nothing more: with a pod's fsGroup the kubelet makes every
// file of the volume group-readable (its mode OR 0440), and without fsGroup
// a non-root user cannot read the root-owned file at all.
func checkPrivateKeyMode(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	perm := st.Mode().Perm()
	if runtime.GOOS == "windows" || perm&0o077 == 0 {
		return nil
	}
	if inSecretVolume(path) {
		if perm&0o037 == 0 {
			return nil
		}
		return fmt.Errorf("%s is accessible by others (mode %04o); a private key mounted from a Secret may be readable by its group (fsGroup), nothing more: set the volume's defaultMode to 0440 (or 0400)", path, perm)
	}
	return fmt.Errorf("%s is accessible by others (mode %04o); a private key must be readable only by its owner: chmod 600 %s", path, perm, path)
}

// The kubelet's atomic writer, which fills Secret, ConfigMap and projected
// volumes: each update goes to a new folder ..YYYY_MM_DD_HH_MM_SS.RANDOM
// (os.MkdirTemp with the prefix time.Now().UTC().Format("..2006_01_02_15_04_05."))
// in the volume's folder, the symbolic link ..data next to it points to that
// folder by its name, and each key's file is a link KEY -> ..data/KEY.
// Source: https://github.com/kubernetes/kubernetes/blob/master/pkg/volume/util/atomic_writer.go
// (newTimestampDir, dataDirName, createUserVisibleFiles; 2026-12-03). With
// fsGroup, SetVolumeOwnership in pkg/volume/volume_linux.go then ORs each
// file's mode with roMask 0440 on a read-only volume such as a Secret's
// (https://github.com/kubernetes/kubernetes/blob/master/pkg/volume/volume_linux.go, 2026-12-03).
const kubeletDataLink = "..data"

var kubeletTimestampDir = regexp.MustCompile(`^\.\.\d{4}_\d{2}_\d{2}_\d{2}_\d{2}_\d{2}\.[0-9A-Za-z]+$`)

// inSecretVolume reports whether path is a file the kubelet's atomic writer
// laid out: its target (every link followed: FILE -> ..data/FILE, or a
// link elsewhere to it) lies in a folder named ..YYYY_MM_DD_HH_MM_SS.N, and
// the ..data next to that folder is a symbolic link to it. Anything
// unreadable is no.
func inSecretVolume(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return false
	}
	for dir := filepath.Dir(real); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if !kubeletTimestampDir.MatchString(filepath.Base(dir)) {
			continue
		}
		vol := filepath.Dir(dir)
		target, err := os.Readlink(filepath.Join(vol, kubeletDataLink))
		if err != nil || target != filepath.Base(dir) {
			return false
		}
		return true
	}
	return false
}
