package accept

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/gpuctl/gpuctl/internal/record"
	"github.com/gpuctl/gpuctl/internal/safefs"
)

// BundleName is the file name of the evidence bundle of a node's run, in
// its evidence directory: "evidence-NODE-RUN-ID.tar.gz".
func BundleName(node, runID string) string { return "evidence-" + node + "-" + runID + ".tar.gz" }

// uriRE is the form --evidence-uri takes: scheme://rest (RFC 3986's
// scheme, something after the slashes).
var uriRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://\S+$`)

// CheckEvidenceURI returns an error unless uri has the form scheme://...
// ("s3://bucket/path", "gs://bucket/path", "https://host/path").
func CheckEvidenceURI(uri string) error {
	if !uriRE.MatchString(uri) {
		return fmt.Errorf("--evidence-uri %q: want SCHEME://LOCATION, e.g. s3://bucket/path or gs://bucket/path", uri)
	}
	return nil
}

// inBundle reports whether file name of an evidence directory goes into
// its bundle: every evidence file and run.json, not a bundle or a record
// (the record names the bundle, so it cannot be in it).
func inBundle(name string) bool {
	return !strings.HasSuffix(name, ".tar.gz") && !strings.HasSuffix(name, ".dsse.json")
}

// WriteBundle writes the regular files of evidence directory dir (inBundle)
// as one tar.gz, dir/name, and returns its record entry with uri. The bytes
// depend on the files' names and contents alone: sorted names, mode 0644,
// zero mtimes (the Unix epoch), no owner, no gzip name or time. Each file
// is read as safefs.Evidence (at most 16 MiB) inside dir.
func WriteBundle(dir, name, uri string) (*record.EvidenceBundle, error) {
	data, err := BundleBytes(dir)
	if err != nil {
		return nil, fmt.Errorf("evidence bundle: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		return nil, fmt.Errorf("evidence bundle: %w", err)
	}
	e := record.EvidenceOf(name, data)
	return &record.EvidenceBundle{Name: name, SHA256: e.SHA256, Bytes: e.Bytes, URI: uri}, nil
}

// BundleBytes returns the tar.gz of evidence directory dir that
// WriteBundle writes.
func BundleBytes(dir string) ([]byte, error) {
	root, err := safefs.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	ents, err := root.ReadDir(".")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() && inBundle(e.Name()) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf) // no Name, ModTime zero: not written
	tw := tar.NewWriter(zw)
	for _, n := range names {
		data, err := root.ReadFile(n, safefs.Evidence)
		if err != nil {
			return nil, err
		}
		h := &tar.Header{Typeflag: tar.TypeReg, Name: n, Mode: 0o644, Size: int64(len(data)), ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
