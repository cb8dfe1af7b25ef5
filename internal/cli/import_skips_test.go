package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cpuOnlyTerraform has no GPU pool and more than five skips.
const cpuOnlyTerraform = `resource "aws_eks_node_group" "system" {
  node_group_name = "system"
  instance_types  = ["m6i.large"]
  subnet_ids      = var.subnets
}
resource "aws_iam_role" "a" {}
resource "aws_iam_role" "b" {}
resource "aws_iam_role" "c" {}
resource "aws_iam_role" "d" {}
resource "aws_iam_role" "e" {}
resource "aws_iam_role" "f" {}
variable "subnets" {}
`

// TestImportNoPoolJSONAndVerbose: -o json writes its JSON (unknowns and
// skipped) also when no GPU pool was found, with the same exit code; the
// error names how to list every skip, and -v lists them all with their
// reasons and positions.
func TestImportNoPoolJSONAndVerbose(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(cpuOnlyTerraform), 0o644); err != nil {
		t.Fatal(err)
	}
	streams, _, out, errOut := TestStreams()
	if code := Run(context.Background(), []string{"import", "--root", dir, dir, "-o", "json"}, streams); code != ExitUsage {
		t.Fatalf("exit %d, want %d: %s", code, ExitUsage, errOut)
	}
	var v map[string]any
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("-o json of an import without GPU pools: %v: %q", err, out)
	}
	skipped, ok := v["skipped"].([]any)
	if _, has := v["unknowns"]; !has || !ok || len(skipped) != 7 {
		t.Errorf("JSON keys unknowns, skipped (7): %v", v)
	}
	if !strings.Contains(errOut.String(), "and 2 more; -v lists them") {
		t.Errorf("stderr %q: want the short list to say -v lists them", errOut)
	}

	streams, _, out, errOut = TestStreams()
	if code := Run(context.Background(), []string{"import", "-v", "--root", dir, dir}, streams); code != ExitUsage {
		t.Fatalf("-v: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"7 skipped:", "aws_iam_role.f (" + filepath.Join(dir, "main.tf") + ":11:1): resource type gpuctl does not import", "aws_eks_node_group.system (" + filepath.Join(dir, "main.tf") + ":1:1): not a GPU node pool"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("-v stderr lacks %q:\n%s", want, errOut)
		}
	}
	if out.Len() != 0 {
		t.Errorf("-v without -o json wrote on stdout: %q", out)
	}
}
