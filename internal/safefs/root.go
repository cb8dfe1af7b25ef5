package safefs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Root is a folder whose files gpuctl reads on behalf of its content: every
// name is opened inside it (os.Root), so no "..", absolute path or symbolic
// link reaches a file outside, and only regular files are read, each under
// its kind's cap.
type Root struct {
	root  *os.Root
	abs   string // the folder's absolute path; never shown
	shown string // the folder as messages name it (as the user gave it)
}

// FindRoot is the root of a folder or file the user named: the nearest
// ancestor (path itself included) that holds .git, else path itself (its
// folder when path is a file). The result is relative when path is, so
// that no absolute path of the machine reaches a message.
func FindRoot(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	start := abs
	if st, err := os.Stat(abs); err != nil {
		return "", err
	} else if !st.IsDir() {
		start = filepath.Dir(abs)
	}
	found := start
	for dir := start; ; dir = filepath.Dir(dir) {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			found = dir
			break
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	if filepath.IsAbs(path) {
		return found, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return found, nil
	}
	rel, err := filepath.Rel(wd, found)
	if err != nil {
		return found, nil
	}
	return rel, nil
}

// OpenRoot opens dir as a root. Errors: dir does not exist or is not a
// folder.
func OpenRoot(dir string) (*Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, &Error{Path: dir, Kind: Kind{Name: "folder"}, Err: err}
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, &Error{Path: dir, Kind: Kind{Name: "folder"}, Err: err}
	}
	return &Root{root: r, abs: abs, shown: filepath.Clean(dir)}, nil
}

// Close releases the root's folder.
func (r *Root) Close() error { return r.root.Close() }

// Shown is the root as messages name it.
func (r *Root) Shown() string { return r.shown }

// Name is the root folder's own name (the last element of its path; "/"
// for the file system's root): what Terraform's path.cwd and abspath()
// end with, without the folders above it.
func (r *Root) Name() string { return filepath.Base(r.abs) }

// Path is rel (a name inside the root) as messages name it: joined to the
// root as the user gave it.
func (r *Root) Path(rel string) string {
	if rel == "" || rel == "." {
		return r.shown
	}
	return filepath.Join(r.shown, filepath.FromSlash(rel))
}

// Rel maps path, as the user gave it (relative to the working directory,
// or absolute), to its name inside the root. Errors: ErrOutside when path
// is not below the root (by its name: links are judged when opened).
func (r *Root) Rel(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", &Error{Path: path, Err: err}
	}
	rel, err := filepath.Rel(r.abs, abs)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return "", &Error{Path: path, Err: ErrOutside}
	}
	return rel, nil
}

// Local reports whether name, relative to the root, stays inside it by its
// name: not absolute, no ".." past the top.
func Local(name string) bool {
	return name == "." || filepath.IsLocal(filepath.FromSlash(name))
}

// name checks name for use inside the root and returns it in the system's
// form.
func (r *Root) name(name string) (string, error) {
	n := filepath.FromSlash(name)
	if !Local(n) {
		return "", ErrOutside
	}
	return filepath.Clean(n), nil
}

// wrap turns an error of os.Root into an *Error naming rel, ErrOutside when
// a link led outside.
func (r *Root) wrap(rel string, k Kind, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "escapes") {
		err = ErrOutside
	}
	return &Error{Path: r.Path(rel), Kind: k, Err: err}
}

// ReadFile reads the regular file rel inside the root up to k's cap.
// Errors are *Error naming the path as Path(rel) does: ErrOutside for a
// name or link that leaves the root, ErrNotRegular, ErrTooLarge, or the
// system's.
func (r *Root) ReadFile(rel string, k Kind) ([]byte, error) {
	n, err := r.name(rel)
	if err != nil {
		return nil, r.wrap(rel, k, err)
	}
	st, err := r.root.Stat(n)
	if err != nil {
		return nil, r.wrap(rel, k, err)
	}
	if err := checkMode(st.Mode()); err != nil {
		return nil, r.wrap(rel, k, err)
	}
	f, err := r.root.OpenFile(n, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, r.wrap(rel, k, err)
	}
	defer f.Close()
	return readOpen(f, r.Path(rel), k)
}

// Stat is the file info of rel inside the root, links followed inside it.
func (r *Root) Stat(rel string) (fs.FileInfo, error) {
	n, err := r.name(rel)
	if err != nil {
		return nil, r.wrap(rel, Kind{}, err)
	}
	st, err := r.root.Stat(n)
	if err != nil {
		return nil, r.wrap(rel, Kind{}, err)
	}
	return st, nil
}

// Lstat is the file info of rel inside the root, a link itself for a link.
func (r *Root) Lstat(rel string) (fs.FileInfo, error) {
	n, err := r.name(rel)
	if err != nil {
		return nil, r.wrap(rel, Kind{}, err)
	}
	st, err := r.root.Lstat(n)
	if err != nil {
		return nil, r.wrap(rel, Kind{}, err)
	}
	return st, nil
}

// Readlink is the target of the link rel inside the root, as written (it
// is never followed).
func (r *Root) Readlink(rel string) (string, error) {
	n, err := r.name(rel)
	if err != nil {
		return "", r.wrap(rel, Kind{}, err)
	}
	t, err := r.root.Readlink(n)
	if err != nil {
		return "", r.wrap(rel, Kind{}, err)
	}
	return t, nil
}

// ReadDir lists the folder rel inside the root, sorted by name. Errors:
// those of Stat, a folder of more than MaxDirEntries entries.
func (r *Root) ReadDir(rel string) ([]fs.DirEntry, error) {
	n, err := r.name(rel)
	if err != nil {
		return nil, r.wrap(rel, Kind{}, err)
	}
	ents, err := fs.ReadDir(r.root.FS(), filepath.ToSlash(n))
	if err != nil {
		return nil, r.wrap(rel, Kind{}, err)
	}
	if len(ents) > MaxDirEntries {
		return nil, &Error{Path: r.Path(rel), Err: errors.New("folder holds more than 100000 entries")}
	}
	return ents, nil
}

// Exists reports whether rel names anything inside the root (a link that
// leads outside does not).
func (r *Root) Exists(rel string) bool {
	_, err := r.Stat(rel)
	return err == nil
}
