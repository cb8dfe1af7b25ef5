package cli

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/record"
	"github.com/gpuctl/gpuctl/internal/safefs"
)

// The bounds of `gpuctl report FOLDER`.
const (
	// maxReportRecords is the most record files one report reads (10,000:
	// a fleet of thousands of nodes, a few runs each).
	maxReportRecords = 10_000
	// maxReportDepth is how many folders deep below a RECORD folder report
	// looks for record files (4: BASE/NODE/RUN-ID/ as accept writes them,
	// and one level above).
	maxReportDepth = 4
	// maxReportFolders is the most folders report lists below RECORD
	// folders (100,000); each lists at most safefs.MaxDirEntries entries.
	maxReportFolders = 100_000
)

// reportNames are the record files a folder given to report stands for.
var reportNames = []string{accept.RecordFile, accept.OfflineRecordFile, accept.StatementFile}

// recordFile is one record file to read: its path as messages name it and
// how to read it (safefs, at most record.MaxRecordBytes).
type recordFile struct {
	path string
	read func() ([]byte, error)
}

// recordFiles are the files the RECORD arguments stand for: a file itself,
// a folder the record files below it (folderRecords). done releases the
// folders. Errors: more than maxReportRecords files or maxReportFolders
// folders (exit 2), a folder that cannot be listed or holds no record
// file (exit 2), ctx's.
func recordFiles(ctx context.Context, args []string) (files []recordFile, done func(), err error) {
	var roots []*safefs.Root
	done = func() {
		for _, r := range roots {
			r.Close()
		}
	}
	l := &folderLister{ctx: ctx}
	for _, p := range args {
		if st, err := os.Stat(p); err != nil || !st.IsDir() {
			files = append(files, recordFile{path: p, read: func() ([]byte, error) { return safefs.ReadFile(p, record.FileKind) }})
			continue
		}
		root, err := safefs.OpenRoot(p)
		if err != nil {
			done()
			return nil, nil, readError("reading records", err)
		}
		roots = append(roots, root)
		if err := l.list(root, ".", 0); err != nil {
			done()
			return nil, nil, err
		}
		if len(l.found) == 0 {
			done()
			return nil, nil, withCode(ExitUsage, fmt.Errorf("%s: no record files in this folder or up to %d folders below it (report looks for %s); name the record files, or the evidence folder accept wrote", root.Shown(), maxReportDepth, strings.Join(reportNames, ", ")))
		}
		files = append(files, l.found...)
		l.found = nil
		if len(files) > maxReportRecords {
			done()
			return nil, nil, withCode(ExitUsage, fmt.Errorf("more than %d record files; report on fewer at a time", maxReportRecords))
		}
	}
	return files, done, nil
}

// folderLister finds record files below a root, bounded.
type folderLister struct {
	ctx     context.Context
	folders int
	found   []recordFile
}

// list adds the record files in the folder rel of root and, up to
// maxReportDepth, below it; links are not followed.
func (l *folderLister) list(root *safefs.Root, rel string, depth int) error {
	if err := l.ctx.Err(); err != nil {
		return err
	}
	if l.folders++; l.folders > maxReportFolders {
		return withCode(ExitUsage, fmt.Errorf("%s: more than %d folders below the RECORD folders; name fewer", root.Shown(), maxReportFolders))
	}
	ents, err := root.ReadDir(rel)
	if err != nil {
		return readError("reading records", err)
	}
	for _, e := range ents {
		name := path.Join(rel, e.Name())
		switch {
		case e.IsDir() && depth < maxReportDepth:
			if err := l.list(root, name, depth+1); err != nil {
				return err
			}
		case e.Type()&fs.ModeType == 0 && slices.Contains(reportNames, e.Name()):
			l.found = append(l.found, recordFile{path: root.Path(name), read: func() ([]byte, error) { return root.ReadFile(name, record.FileKind) }})
			if len(l.found) > maxReportRecords {
				return withCode(ExitUsage, fmt.Errorf("%s: more than %d record files; report on fewer at a time", root.Shown(), maxReportRecords))
			}
		}
	}
	return nil
}
