package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/gpuctl/gpuctl/internal/check"
	"github.com/gpuctl/gpuctl/internal/safefs"
)

// The output tree (`generate --out`, `plan --out`) as gpuctl reads it: the
// root is --out (safefs.OpenRoot), every file is read through it with
// safefs.Output's cap (the manifest with safefs.Manifest's), and nothing is
// followed: a symbolic link, FIFO, device, socket or folder where gpuctl
// writes a file (or at a folder on its way), a file over the cap, and a
// manifest line gpuctl refuses make the whole tree untrusted (*TreeError,
// naming every such path and never a file's content). plan, generate and
// generate --check all read the tree through ReadOut, so they agree.

// MaxManifestEntries is the most paths one .gpuctl-files may list; a
// manifest with more is refused. `generate all` writes about 15 files per
// environment, so this admits hundreds of environments.
const MaxManifestEntries = 10_000

// StagingName is the folder under --out where generate writes a run's
// files before renaming them into place; it is gpuctl's, never compared
// and never listed.
const StagingName = ".gpuctl-staging"

// ManifestHeader starts .gpuctl-files: what it is and the format of its
// lines.
const ManifestHeader = "# Files written by gpuctl generate; gpuctl generate --check compares these and no others.\n" +
	"# Each line: the SHA-256 of the content gpuctl wrote, two spaces, the path (as sha256sum writes them).\n" +
	"# generate replaces or removes a listed file only while its content has that digest.\n"

// maxProblemsShown is how many untrusted paths a TreeError names before it
// counts the rest.
const maxProblemsShown = 20

// TreeError is an output tree gpuctl will not read or write: every path
// that is not what gpuctl writes there (a link, a FIFO, a device, a folder
// where a file goes, a file over its cap, a file it cannot read) and every
// manifest line it refuses. It names paths (as the user named --out) and
// never content; the command exits 2.
type TreeError struct {
	// Dir is the tree as the user named it.
	Dir string
	// Problems are "PATH is a symbolic link" and the like, sorted.
	Problems []string
}

func (e *TreeError) Error() string {
	shown := e.Problems
	more := ""
	if len(shown) > maxProblemsShown {
		more = fmt.Sprintf(" and %d more", len(shown)-maxProblemsShown)
		shown = shown[:maxProblemsShown]
	}
	return fmt.Sprintf("%s%s; gpuctl does not write through links nor read them, and reads and writes only regular files and folders in an output tree (remove them, or write elsewhere)", strings.Join(shown, "; "), more)
}

// treeReader is what a Tree reads through: a *safefs.Root, or an fs.FS
// (tests; fsAdapter).
type treeReader interface {
	Lstat(rel string) (fs.FileInfo, error)
	ReadFile(rel string, k safefs.Kind) ([]byte, error)
}

// Tree is an output tree opened for reading. A Tree of a folder that does
// not exist is empty.
type Tree struct {
	r     treeReader // nil: the folder does not exist
	shown string
	close func() error
}

// OpenTree opens dir (--out) as an output tree. A dir that does not exist
// is an empty tree. Errors: dir cannot be opened as a folder (*safefs.Error).
func OpenTree(dir string) (*Tree, error) {
	root, err := safefs.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return &Tree{shown: path.Clean(dir), close: func() error { return nil }}, nil
	}
	if err != nil {
		return nil, err
	}
	return &Tree{r: root, shown: root.Shown(), close: root.Close}, nil
}

// TreeFS is an output tree over fsys (named shown in messages), read
// without following links (fs.Lstat); for tests and callers that hold an
// fs.FS rather than a folder.
func TreeFS(fsys fs.FS, shown string) *Tree {
	return &Tree{r: fsAdapter{fsys}, shown: shown, close: func() error { return nil }}
}

// Close releases the tree's folder.
func (t *Tree) Close() error { return t.close() }

// Path is rel as messages name it: joined to the tree as the user named it.
func (t *Tree) Path(rel string) string { return path.Join(t.shown, rel) }

type fsAdapter struct{ fsys fs.FS }

func (a fsAdapter) Lstat(rel string) (fs.FileInfo, error) { return fs.Lstat(a.fsys, rel) }

func (a fsAdapter) ReadFile(rel string, k safefs.Kind) ([]byte, error) {
	data, err := fs.ReadFile(a.fsys, rel)
	if err == nil && int64(len(data)) > k.Max {
		return nil, &safefs.Error{Path: rel, Kind: k, Err: safefs.ErrTooLarge}
	}
	return data, err
}

// ManifestEntry is one line of .gpuctl-files: a path gpuctl wrote and the
// SHA-256 (hex) of what it wrote there; Digest is "" for a line of an older
// gpuctl, which listed paths only.
type ManifestEntry struct {
	Path   string
	Digest string
}

// Digest is the SHA-256 of data in hex, as the manifest records it.
func Digest(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// FormatManifest is the content of .gpuctl-files listing entries (sorted
// by path here): ManifestHeader, then "DIGEST  PATH" a line ("PATH" alone
// for an entry without a digest, kept from an older manifest).
func FormatManifest(entries []ManifestEntry) []byte {
	es := append([]ManifestEntry(nil), entries...)
	sort.Slice(es, func(i, j int) bool { return es[i].Path < es[j].Path })
	var b strings.Builder
	b.WriteString(ManifestHeader)
	for _, e := range es {
		if e.Digest != "" {
			b.WriteString(e.Digest + "  ")
		}
		b.WriteString(e.Path + "\n")
	}
	return []byte(b.String())
}

// parseManifest reads the lines of a manifest (named shown in messages):
// "DIGEST  PATH" or, from an older gpuctl, "PATH"; "#" comments and blank
// lines are skipped. problems are the lines it refuses (an absolute path,
// "..", a path that is not clean and slash-separated), by line number and
// the path quoted; an entry listed twice keeps its first line.
func parseManifest(data []byte, shown string) (entries []ManifestEntry, problems []string) {
	seen := map[string]bool{}
	for i, l := range strings.Split(string(data), "\n") {
		l = strings.TrimRight(l, "\r")
		if strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		e := manifestLine(l)
		if why := refusedPath(e.Path); why != "" {
			problems = append(problems, fmt.Sprintf("%s:%d names %s, %s", shown, i+1, quotePath(e.Path), why))
			continue
		}
		if !seen[e.Path] {
			seen[e.Path] = true
			entries = append(entries, e)
		}
	}
	if len(entries) > MaxManifestEntries {
		problems = append(problems, fmt.Sprintf("%s lists %d paths, more than %d, the most gpuctl reads", shown, len(entries), MaxManifestEntries))
	}
	return entries, problems
}

// manifestLine splits a line into its digest (64 hex digits and two
// spaces, as sha256sum writes them) and path.
func manifestLine(l string) ManifestEntry {
	if len(l) > 66 && l[64:66] == "  " && isHex(l[:64]) {
		return ManifestEntry{Path: l[66:], Digest: strings.ToLower(l[:64])}
	}
	return ManifestEntry{Path: strings.TrimSpace(l)}
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}

// refusedPath says why a manifest path is refused, "" when it is a clean
// relative slash-separated path inside the tree.
func refusedPath(p string) string {
	switch {
	case strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || len(p) > 1 && p[1] == ':':
		return "an absolute path"
	case p == ".." || strings.HasPrefix(p, "../") || strings.Contains(p, "/../") || strings.HasSuffix(p, "/.."):
		return `a path through ".." out of the tree`
	case !fs.ValidPath(p) || p == "." || strings.ContainsAny(p, "\\\x00"):
		return "not a clean slash-separated path inside the tree"
	}
	return ""
}

// quotePath quotes a path for a message, escaped and cut to 200 bytes.
func quotePath(p string) string {
	if len(p) > 200 {
		p = p[:200] + "..."
	}
	return fmt.Sprintf("%q", p)
}

// OutFile is one path of the tree that a run writes or its manifest lists
// in the run's scope.
type OutFile struct {
	Path string
	// Want is what this run writes there; nil for a stale file (listed,
	// no longer generated).
	Want []byte
	// Have is the content on disk; Exists false when there is none.
	Have   []byte
	Exists bool
	// Entry is the file's manifest line; Listed false when it has none.
	Entry  ManifestEntry
	Listed bool
}

// Differs reports whether the file on disk is not what this run writes.
func (f OutFile) Differs() bool { return !f.Exists || string(f.Have) != string(f.Want) }

// Owned reports whether gpuctl may replace or remove the file: there is
// none, it already holds what this run writes, or the manifest lists it
// with the digest of its content. A file listed without a digest (an
// older manifest) is gpuctl's only when it holds what this run writes; an
// unlisted file or one edited since gpuctl wrote it is not.
func (f OutFile) Owned() bool {
	switch {
	case !f.Exists:
		return true
	case f.Want != nil && !f.Differs():
		return true
	}
	return f.Listed && f.Entry.Digest != "" && f.Entry.Digest == Digest(f.Have)
}

// Out is an output tree as one run sees it.
type Out struct {
	// Files are the files the run writes, in the order given.
	Files []OutFile
	// Stale are the files the manifest lists in the run's scope
	// (check.InScope) that the run does not write any more and that are
	// on disk, sorted by path.
	Stale []OutFile
	// Others are the manifest's entries out of the run's scope (another
	// layer's or environment's), as listed.
	Others []ManifestEntry
	// Manifest is .gpuctl-files as it is (Want unset).
	Manifest OutFile
}

// ReadOut reads the tree for a run that writes want (layer and env as
// check.InScope takes them): each wanted file, the manifest, and each
// listed file. Links are never followed; a link, FIFO, device, socket or
// folder where a file belongs, a file over safefs.Output's cap, and every
// refused manifest line together make one *TreeError.
func ReadOut(t *Tree, want []check.File, layer, env string) (*Out, error) {
	rd := treeRead{t: t, dirs: map[string]string{}, problems: map[string]bool{}}
	out := &Out{Manifest: OutFile{Path: check.ManifestName}}
	out.Manifest.Have, out.Manifest.Exists = rd.file(check.ManifestName, safefs.Manifest)
	var entries []ManifestEntry
	if out.Manifest.Exists {
		var refused []string
		entries, refused = parseManifest(out.Manifest.Have, t.Path(check.ManifestName))
		rd.add(refused...)
	}
	listed := map[string]ManifestEntry{}
	for _, e := range entries {
		listed[e.Path] = e
	}
	wanted := map[string]bool{}
	for _, f := range want {
		wanted[f.Path] = true
		of := OutFile{Path: f.Path, Want: f.Data}
		of.Entry, of.Listed = listed[f.Path]
		of.Have, of.Exists = rd.file(f.Path, safefs.Output)
		out.Files = append(out.Files, of)
	}
	for _, e := range entries {
		switch {
		case wanted[e.Path] || e.Path == check.ManifestName:
		case !check.InScope(e.Path, layer, env):
			rd.kind(e.Path, false)
			out.Others = append(out.Others, e)
		default:
			of := OutFile{Path: e.Path, Entry: e, Listed: true}
			if of.Have, of.Exists = rd.file(e.Path, safefs.Output); of.Exists {
				out.Stale = append(out.Stale, of)
			}
		}
	}
	rd.kind(StagingName, true)
	sort.Slice(out.Stale, func(i, j int) bool { return out.Stale[i].Path < out.Stale[j].Path })
	if len(rd.problems) > 0 {
		return nil, &TreeError{Dir: t.shown, Problems: sortedKeys(rd.problems)}
	}
	return out, nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// treeRead is one ReadOut: the folders seen and the problems found.
type treeRead struct {
	t *Tree
	// dirs maps a folder on the way to a file to its problem ("" when it
	// is a folder or missing; missing is "-").
	dirs     map[string]string
	problems map[string]bool
}

func (rd *treeRead) add(ps ...string) {
	for _, p := range ps {
		rd.problems[p] = true
	}
}

// dirOK checks each folder on the way to rel: false when one is missing
// (so is rel) or is not a folder (recorded as a problem).
func (rd *treeRead) dirOK(rel string) bool {
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		d := strings.Join(parts[:i], "/")
		st, ok := rd.dirs[d]
		if !ok {
			st = rd.dirState(d)
			rd.dirs[d] = st
		}
		switch st {
		case "":
		case "-":
			return false
		default:
			rd.add(st)
			return false
		}
	}
	return true
}

// dirState is "" for a folder, "-" for nothing there, else the problem.
func (rd *treeRead) dirState(d string) string {
	fi, err := rd.t.r.Lstat(d)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "-"
	case err != nil:
		return readProblem(rd.t.Path(d), safefs.Output, err)
	case fi.IsDir():
		return ""
	}
	return fmt.Sprintf("%s %s where gpuctl writes a folder", rd.t.Path(d), modeText(fi.Mode()))
}

// kind checks that rel, if it exists, is a regular file (dir: a folder)
// without reading it.
func (rd *treeRead) kind(rel string, dir bool) {
	if rd.t.r == nil || !rd.dirOK(rel) {
		return
	}
	fi, err := rd.t.r.Lstat(rel)
	if err != nil || !dir && fi.Mode().IsRegular() || dir && fi.IsDir() {
		return
	}
	what := modeText(fi.Mode())
	if dir {
		what += " where gpuctl writes a folder"
	}
	rd.add(rd.t.Path(rel) + " " + what)
}

// file reads rel if it is a regular file (links are not followed); exists
// is false when there is nothing at rel. Anything else is a problem.
func (rd *treeRead) file(rel string, k safefs.Kind) (data []byte, exists bool) {
	if rd.t.r == nil || !rd.dirOK(rel) {
		return nil, false
	}
	fi, err := rd.t.r.Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false
	case err != nil:
		rd.add(readProblem(rd.t.Path(rel), k, err))
		return nil, false
	case !fi.Mode().IsRegular():
		rd.add(fmt.Sprintf("%s %s", rd.t.Path(rel), modeText(fi.Mode())))
		return nil, false
	}
	data, err = rd.t.r.ReadFile(rel, k)
	if err != nil {
		rd.add(readProblem(rd.t.Path(rel), k, err))
		return nil, false
	}
	return data, true
}

// readProblem is a read error as a problem naming the path only.
func readProblem(shown string, k safefs.Kind, err error) string {
	switch {
	case errors.Is(err, safefs.ErrTooLarge):
		return fmt.Sprintf("%s is larger than %s, the most gpuctl reads of a %s", shown, safefs.Size(k.Max), k.Name)
	case errors.Is(err, safefs.ErrNotRegular):
		return shown + " is not a regular file"
	case errors.Is(err, safefs.ErrOutside):
		return shown + " leads outside the tree"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s: cannot be read (%v)", shown, pe.Err)
	}
	return shown + ": cannot be read"
}

// modeText says what a path that is not a regular file is.
func modeText(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "is a file"
	case m&fs.ModeSymlink != 0:
		return "is a symbolic link"
	case m.IsDir():
		return "is a folder where gpuctl writes a file"
	case m&fs.ModeNamedPipe != 0:
		return "is a FIFO"
	case m&fs.ModeSocket != 0:
		return "is a socket"
	case m&fs.ModeDevice != 0 || m&fs.ModeCharDevice != 0:
		return "is a device"
	}
	return "is not a regular file"
}
