package importer

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAutoModeNodeClassAlone holds an EKS Auto Mode NodeClass read on its
// own: told as Karpenter YAML, no pool, and the class listed as skipped by
// its kind and name, with the reason.
func TestAutoModeNodeClassAlone(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "class.yaml")
	doc := "apiVersion: eks.amazonaws.com/v1\nkind: NodeClass\nmetadata:\n  name: gpu\nspec:\n  ephemeralStorage:\n    size: 100Gi\n"
	if err := os.WriteFile(f, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := Import([]string{f}, Options{Root: dir})
	var np *NoPoolsError
	if !errors.As(err, &np) {
		t.Fatalf("err = %v, want a NoPoolsError", err)
	}
	if res.From != FromKarpenter {
		t.Errorf("from = %q, want %q", res.From, FromKarpenter)
	}
	if len(res.Skipped) != 1 || res.Skipped[0].What != "NodeClass gpu" || !strings.Contains(res.Skipped[0].Reason, "no GPU NodePool") {
		t.Errorf("skipped = %+v, want NodeClass gpu, no GPU NodePool refers to it", res.Skipped)
	}
}

// TestEksctlNotRead holds an eksctl ClusterConfig, alone or in a folder with
// nothing else gpuctl reads: an error that names it.
func TestEksctlNotRead(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "cluster.yaml")
	doc := "# eksctl\napiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: c, region: us-east-1}\n"
	if err := os.WriteFile(f, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{f, dir} {
		_, err := Import([]string{p}, Options{Root: dir})
		if err == nil || !strings.Contains(err.Error(), "cluster.yaml: an eksctl ClusterConfig: gpuctl reads") {
			t.Errorf("Import(%s) = %v, want the eksctl message", p, err)
		}
	}
}
