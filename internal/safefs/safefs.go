// Package safefs is the one way gpuctl opens a file it reads: regular files
// only (a FIFO, device or socket is refused by its mode before it is opened
// for reading, and again by the open file's mode), read through a limit that
// fails past the cap of the file's kind instead of trusting the size stat
// reports (/proc files stat as 0 bytes), and, for whatever gpuctl reads on
// behalf of a folder (a Terraform configuration, a blueprint, an output
// tree), opened inside a root that no "..", absolute path or symbolic link
// leaves (os.Root).
//
// Errors name the path and what is wrong, never the file's content. The
// package reads and returns bytes; it never prints.
package safefs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Kind is a kind of file and the most bytes gpuctl reads of one.
type Kind struct {
	// Name is what the file is, for messages ("Terraform file").
	Name string
	// Max is the cap in bytes.
	Max int64
}

// The kinds of file gpuctl reads and their caps. Real files stay far below
// each: a cluster spec is a few KiB, a Terraform file of a large
// configuration a few hundred KiB, a signed record with its evidence under
// 1 MiB. The Terraform cap fits gpuctl's own output: the node_pools.tf it
// generates for 1,000 EKS pools with EFA is 9.4 MB (the importer's
// MaxTokens bounds what parsing a file costs; bytes alone cost their size).
var (
	Spec      = Kind{"cluster spec", 4 << 20}
	Terraform = Kind{"Terraform file", 16 << 20}
	VarFile   = Kind{"Terraform variable file", 4 << 20}
	// Template is a file read by Terraform's file(), templatefile() and the
	// rest of the file family, or a blueprint's $(file(...)): a script, a
	// certificate, a values file (go-cty normalises every string it makes,
	// so a larger one costs each expression that passes it on).
	Template  = Kind{"file read by an expression", 1 << 20}
	Blueprint = Kind{"blueprint", 4 << 20}
	Karpenter = Kind{"Karpenter YAML", 4 << 20}
	Waivers   = Kind{"waivers file", 1 << 20}
	Policy    = Kind{"policy file", 1 << 20}
	Record    = Kind{"acceptance record", 16 << 20}
	Evidence  = Kind{"evidence file", 16 << 20}
	// Bundle is a run's evidence directory as one tar.gz (accept
	// --evidence-uri): its files are evidence files, several of them.
	Bundle = Kind{"evidence bundle", 256 << 20}
	Key    = Kind{"key file", 64 << 10}
	// Output is a file of a generated tree (`generate --out`, `plan --out`).
	Output = Kind{"file of the output tree", 4 << 20}
	// Manifest is an output tree's .gpuctl-files.
	Manifest = Kind{"output manifest", 4 << 20}
)

// MaxDirEntries is the most entries gpuctl lists in one folder.
const MaxDirEntries = 100_000

// ErrNotRegular is a path that is not a regular file (a FIFO, device,
// socket or folder).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is a file over its kind's cap.
var ErrTooLarge = errors.New("file is too large")

// ErrOutside is a path that leaves the root it is read under.
var ErrOutside = errors.New("outside the folder gpuctl reads")

// Error is a file gpuctl refused or could not read. It names the path as
// the caller gave it and wraps the cause (ErrNotRegular, ErrTooLarge,
// ErrOutside or the system's error).
type Error struct {
	Path string
	Kind Kind
	Err  error
}

func (e *Error) Error() string {
	switch {
	case errors.Is(e.Err, ErrTooLarge):
		return fmt.Sprintf("%s: %s is larger than %s, the most gpuctl reads of one", e.Path, e.Kind.Name, Size(e.Kind.Max))
	case errors.Is(e.Err, ErrNotRegular):
		return fmt.Sprintf("%s: %s (%s); gpuctl reads only regular files", e.Path, ErrNotRegular, e.what())
	case errors.Is(e.Err, ErrOutside):
		return fmt.Sprintf("%s: %v", e.Path, e.Err)
	}
	var pe *fs.PathError
	if errors.As(e.Err, &pe) {
		return fmt.Sprintf("%s: %v", e.Path, pe.Err)
	}
	return fmt.Sprintf("%s: %v", e.Path, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

func (e *Error) what() string {
	var m modeError
	if errors.As(e.Err, &m) {
		return m.desc
	}
	return "not a file"
}

// modeError is ErrNotRegular with what the path is.
type modeError struct{ desc string }

func (m modeError) Error() string        { return ErrNotRegular.Error() }
func (m modeError) Is(target error) bool { return target == ErrNotRegular }

// Size writes n bytes as KiB or MiB.
func Size(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

// checkMode refuses anything but a regular file.
func checkMode(m fs.FileMode) error {
	switch {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return modeError{"a folder"}
	case m&fs.ModeNamedPipe != 0:
		return modeError{"a FIFO"}
	case m&fs.ModeSocket != 0:
		return modeError{"a socket"}
	case m&fs.ModeDevice != 0 || m&fs.ModeCharDevice != 0:
		return modeError{"a device"}
	case m&fs.ModeSymlink != 0:
		return modeError{"a symbolic link"}
	}
	return modeError{"not a file"}
}

// ReadFile reads the regular file at path (a path the user named: symbolic
// links are followed) up to k's cap. Errors are *Error.
func ReadFile(path string, k Kind) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, &Error{Path: path, Kind: k, Err: err}
	}
	if err := checkMode(st.Mode()); err != nil {
		return nil, &Error{Path: path, Kind: k, Err: err}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, &Error{Path: path, Kind: k, Err: err}
	}
	defer f.Close()
	return readOpen(f, path, k)
}

// readOpen checks the open file's mode (the path may have changed since it
// was checked) and reads it through k's cap.
func readOpen(f *os.File, path string, k Kind) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, &Error{Path: path, Kind: k, Err: err}
	}
	if err := checkMode(st.Mode()); err != nil {
		return nil, &Error{Path: path, Kind: k, Err: err}
	}
	return readCapped(f, path, k)
}

// readCapped reads r to its end, failing once it passes k.Max bytes.
func readCapped(r io.Reader, path string, k Kind) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, k.Max+1))
	if err != nil {
		return nil, &Error{Path: path, Kind: k, Err: err}
	}
	if int64(len(data)) > k.Max {
		return nil, &Error{Path: path, Kind: k, Err: ErrTooLarge}
	}
	return data, nil
}

// ReadReader reads r (stdin) up to k's cap, named path in errors.
func ReadReader(r io.Reader, path string, k Kind) ([]byte, error) {
	return readCapped(r, path, k)
}
