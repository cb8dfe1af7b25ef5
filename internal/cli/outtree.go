package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/gpuctl/gpuctl/internal/plan"
)

// checkOutFolder refuses an --out that exists and is not a folder, or is
// a symbolic link (a usage error naming the flag): a checked-out output
// tree that a pull request turned into a link must not send reads or
// writes elsewhere.
func checkOutFolder(dir string) error {
	if lst, err := os.Lstat(filepath.Clean(dir)); err == nil && lst.Mode()&os.ModeSymlink != 0 {
		return usageErrorf("--out %s: is a symbolic link; gpuctl reads and writes only a real folder (name the folder it points to)", dir)
	}
	st, err := os.Stat(dir)
	switch {
	case err != nil || st.IsDir():
		return nil
	case st.Mode().IsRegular():
		return usageErrorf("--out %s: is a file, want a folder", dir)
	}
	return usageErrorf("--out %s: is not a folder, want a folder", dir)
}

// outTreeError is an error reading --out: a tree gpuctl does not read
// (*plan.TreeError) or a folder it cannot open exits 2 naming the flag.
func outTreeError(err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	return withCode(ExitUsage, fmt.Errorf("--out: %w", err))
}

// outRun is what one generate run does to --out, decided from the tree as
// plan.ReadOut read it: gpuctl replaces and removes only its own files
// (plan.OutFile.Owned).
type outRun struct {
	// write are the files written, the manifest last.
	write []genFile
	// keep are files this run would write whose content gpuctl did not
	// write there (a hand edit, a file of the team's own): left as they
	// are, and the run exits 3.
	keep []string
	// remove are stale files gpuctl wrote: removed.
	remove []string
	// handOver are stale files whose content gpuctl did not write (or, from
	// an older manifest without digests, cannot tell): left as they are and
	// no longer listed.
	handOver []string
	// manifest is .gpuctl-files after the run.
	manifest genFile
}

// decideOut is what the run does to the tree st: write every file it
// owns, keep the others, and list in the new manifest what it wrote (with
// its digest), what it kept that was listed (as listed) and the entries of
// other runs (other layers or environments) as they were.
func decideOut(st *plan.Out) outRun {
	var r outRun
	entries := append([]plan.ManifestEntry(nil), st.Others...)
	for _, f := range st.Files {
		if !f.Owned() {
			r.keep = append(r.keep, f.Path)
			if f.Listed {
				entries = append(entries, f.Entry)
			}
			continue
		}
		r.write = append(r.write, genFile{Path: f.Path, Data: f.Want})
		entries = append(entries, plan.ManifestEntry{Path: f.Path, Digest: plan.Digest(f.Want)})
	}
	for _, f := range st.Stale {
		if f.Owned() {
			r.remove = append(r.remove, f.Path)
		} else {
			r.handOver = append(r.handOver, f.Path)
		}
	}
	r.manifest = genFile{Path: manifestName, Data: plan.FormatManifest(entries)}
	r.write = append(r.write, r.manifest)
	return r
}

// Folders of the staging area under plan.StagingName: the new files, and
// the previous ones while a run moves them aside.
const (
	stagedNew = plan.StagingName + "/new"
	stagedOld = plan.StagingName + "/old"
)

// stager applies a run to --out: it writes every file into
// --out/.gpuctl-staging/new, and only when all are written moves them into
// place, the files they replace and the files removed aside into
// .gpuctl-staging/old; an error on the way moves everything back, so the
// tree is as it was. Every name is opened inside --out (os.Root), and no
// link below it is written through.
type stager struct {
	root  *os.Root
	shown string
	// rename is root.Rename; tests make it fail.
	rename func(oldname, newname string) error
	// moved are the moves made, in order; made the folders created in
	// the tree.
	moved []move
	made  []string
}

// move is one rename of the commit: from, to (names in the root).
type move struct{ from, to string }

func newStager(dir string) (*stager, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &stager{root: root, shown: dir, rename: root.Rename}, nil
}

func (s *stager) close() error { return s.root.Close() }

// show is rel as messages name it.
func (s *stager) show(rel string) string { return filepath.Join(s.shown, filepath.FromSlash(rel)) }

// apply writes files and removes remove. Errors: writing a file (nothing in
// the tree changed), or a move (moved back; the error says so if moving
// back failed too, and where the previous files are).
func (s *stager) apply(ctx context.Context, files []genFile, remove []string) error {
	if err := s.prepare(); err != nil {
		return err
	}
	if err := s.stage(ctx, files); err != nil {
		s.root.RemoveAll(plan.StagingName)
		return err
	}
	if err := s.commit(files, remove); err != nil {
		if uerr := s.undo(); uerr != nil {
			return fmt.Errorf("%w; moving the previous files back failed too (%v): they are under %s", err, uerr, s.show(stagedOld))
		}
		s.root.RemoveAll(plan.StagingName)
		return fmt.Errorf("%w; %s is as it was", err, s.shown)
	}
	return s.root.RemoveAll(plan.StagingName)
}

// prepare empties the staging folder (a run that was killed leaves it).
func (s *stager) prepare() error {
	st, err := s.root.Lstat(plan.StagingName)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	case st.Mode()&fs.ModeSymlink != 0:
		return withCode(ExitUsage, fmt.Errorf("--out: %s %w", s.show(plan.StagingName), errSymlink))
	default:
		if err := s.root.RemoveAll(plan.StagingName); err != nil {
			return err
		}
	}
	if err := s.root.Mkdir(plan.StagingName, 0o700); err != nil {
		return err
	}
	return s.root.MkdirAll(stagedOld, 0o700)
}

// stage writes every file under stagedNew; an interrupt stops between
// files.
func (s *stager) stage(ctx context.Context, files []genFile) error {
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := stagedNew + "/" + f.Path
		if err := s.root.MkdirAll(path.Dir(name), 0o755); err != nil {
			return fmt.Errorf("writing %s: %w", s.show(f.Path), unwrapPath(err))
		}
		if err := s.writeFile(name, f.Data); err != nil {
			return fmt.Errorf("writing %s: %w", s.show(f.Path), unwrapPath(err))
		}
	}
	return nil
}

// writeFile creates name (it must not exist) with data, mode 0644.
func (s *stager) writeFile(name string, data []byte) error {
	f, err := s.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// commit moves the staged files into place (what they replace aside
// first) and the removed files aside. Interrupts are not checked: it is a
// few renames, and stopping half-way would be what staging avoids.
func (s *stager) commit(files []genFile, remove []string) error {
	for _, f := range files {
		if err := s.mkdirs(path.Dir(f.Path)); err != nil {
			return err
		}
		if err := s.moveAside(f.Path); err != nil {
			return err
		}
		if err := s.move(stagedNew+"/"+f.Path, f.Path, f.Path); err != nil {
			return err
		}
	}
	for _, p := range remove {
		if err := s.moveAside(p); err != nil {
			return err
		}
	}
	return nil
}

// moveAside moves the regular file rel, if there is one, to stagedOld.
// Errors: rel is a link or not a regular file (the tree changed since it
// was read).
func (s *stager) moveAside(rel string) error {
	st, err := s.root.Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case st.Mode()&fs.ModeSymlink != 0:
		return withCode(ExitUsage, fmt.Errorf("--out: %s %w", s.show(rel), errSymlink))
	case !st.Mode().IsRegular():
		return withCode(ExitUsage, fmt.Errorf("--out: %s is not a regular file", s.show(rel)))
	}
	old := stagedOld + "/" + rel
	if err := s.root.MkdirAll(path.Dir(old), 0o700); err != nil {
		return err
	}
	return s.move(rel, old, rel)
}

// move renames from to to and records it; errors name rel, the path in
// the tree.
func (s *stager) move(from, to, rel string) error {
	if err := s.rename(from, to); err != nil {
		return fmt.Errorf("writing %s: %w", s.show(rel), unwrapPath(err))
	}
	s.moved = append(s.moved, move{from, to})
	return nil
}

// mkdirs creates the folders of rel (slash-separated) in the tree one by
// one, refusing a link or a file on the way.
func (s *stager) mkdirs(rel string) error {
	dir := ""
	for _, part := range strings.Split(rel, "/") {
		if part == "" || part == "." {
			continue
		}
		dir = path.Join(dir, part)
		st, err := s.root.Lstat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := s.root.Mkdir(dir, 0o755); err != nil {
				return fmt.Errorf("creating %s: %w", s.show(dir), unwrapPath(err))
			}
			s.made = append(s.made, dir)
		case err != nil:
			return err
		case st.Mode()&fs.ModeSymlink != 0:
			return withCode(ExitUsage, fmt.Errorf("--out: %s %w", s.show(dir), errSymlink))
		case !st.IsDir():
			return withCode(ExitUsage, fmt.Errorf("--out: %s is not a folder", s.show(dir)))
		}
	}
	return nil
}

// undo moves back what commit moved, last first, and removes the folders
// it created.
func (s *stager) undo() error {
	var errs []error
	for i := len(s.moved) - 1; i >= 0; i-- {
		m := s.moved[i]
		if err := s.rename(m.to, m.from); err != nil {
			errs = append(errs, unwrapPath(err))
		}
	}
	for i := len(s.made) - 1; i >= 0; i-- {
		if err := s.root.Remove(s.made[i]); err != nil {
			errs = append(errs, unwrapPath(err))
		}
	}
	return errors.Join(errs...)
}

// unwrapPath is the system's error without os.Root's name of the file
// (messages name it as the user named --out).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
