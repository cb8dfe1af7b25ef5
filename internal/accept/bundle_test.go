package accept

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuctl/gpuctl/internal/record"
)

// TestBundleDeterministic: the bundle of a directory is the same bytes
// whatever the files' times, holds the evidence sorted and no record or
// bundle; its sha256 and size are the record's, and CheckBundle finds a
// changed bundle and accepts a missing one.
func TestBundleDeterministic(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"run.json": "{}\n", "inventory.nvidia-smi-query.log": "<nvidia_smi_log/>\n", "diagnostics.nvidia-bug-report.log.gz": "\x1f\x8b binary", "record.dsse.json": "{}", "old.tar.gz": "x"}
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	first, err := BundleBytes(dir)
	if err != nil {
		t.Fatal(err)
	}
	later := time.Date(2027, 1, 2, 3, 4, 5, 6, time.UTC)
	for n := range files {
		if err := os.Chtimes(filepath.Join(dir, n), later, later); err != nil {
			t.Fatal(err)
		}
	}
	name := BundleName("gpu-node-1", "20261129t120000-abcd")
	b, err := WriteBundle(dir, name, "s3://acme-gpu-evidence/gpu-node-1/")
	if err != nil {
		t.Fatal(err)
	}
	written, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, written) {
		t.Fatal("the bundle changed with the files' times")
	}
	if again, _ := BundleBytes(dir); !bytes.Equal(again, written) {
		t.Error("a second bundle of the directory (the first one in it) differs")
	}
	if e := record.EvidenceOf(name, written); b.SHA256 != e.SHA256 || b.Bytes != e.Bytes || b.Name != name || b.URI != "s3://acme-gpu-evidence/gpu-node-1/" {
		t.Errorf("record entry %+v, file %+v", b, e)
	}
	zr, err := gzip.NewReader(bytes.NewReader(written))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !h.ModTime.Equal(time.Unix(0, 0)) || h.Uid != 0 || h.Uname != "" || h.Mode != 0o644 {
			t.Errorf("%s: header %+v", h.Name, h)
		}
		names = append(names, h.Name)
	}
	if got := strings.Join(names, " "); got != "diagnostics.nvidia-bug-report.log.gz inventory.nvidia-smi-query.log run.json" {
		t.Errorf("bundle holds %s", got)
	}
	if p := record.CheckBundle(dir, b); len(p) != 0 {
		t.Errorf("unchanged bundle: %v", p)
	}
	if err := os.WriteFile(filepath.Join(dir, name), append(written, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	if p := record.CheckBundle(dir, b); len(p) != 1 || !strings.Contains(p[0], "record says "+b.SHA256) {
		t.Errorf("changed bundle: %v", p)
	}
	os.Remove(filepath.Join(dir, name))
	if p := record.CheckBundle(dir, b); len(p) != 0 {
		t.Errorf("a bundle that lives only at its URI: %v", p)
	}
	if p := record.CheckBundle(dir, &record.EvidenceBundle{Name: "../x.tar.gz"}); len(p) != 1 {
		t.Errorf("a bundle name with a directory: %v", p)
	}
}

func TestCheckEvidenceURI(t *testing.T) {
	for uri, ok := range map[string]bool{"s3://bucket/path": true, "gs://b/p/": true, "https://evidence.example.com/x": true,
		"": false, "bucket/path": false, "s3:/bucket": false, "s3://": false, "3s://b": false, "s3://b c": false} {
		if err := CheckEvidenceURI(uri); (err == nil) != ok {
			t.Errorf("%q: %v", uri, err)
		}
	}
}
