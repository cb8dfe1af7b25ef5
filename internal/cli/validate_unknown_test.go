package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// validateJSON runs validate -o json on args and decodes the report.
func validateJSON(t *testing.T, args ...string) (int, map[string]any, string) {
	t.Helper()
	streams, _, out, errOut := TestStreams()
	code := Run(context.Background(), append([]string{"validate", "--as-of", "2026-12-01", "-o", "json"}, args...), streams)
	var rep map[string]any
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("validate %v: exit %d, stdout is not JSON (%v): %q; stderr %s", args, code, err, out, errOut)
	}
	return code, rep, errOut.String()
}

// TestValidateUnknownFacts: an imported value that depends on a data source
// is reported as not judged (JSON notJudged and the import's lists; the
// table's line above the summary), not as missing.
func TestValidateUnknownFacts(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "import", "gke-engine-versions-data-source")
	code, rep, errOut := validateJSON(t, "--root", dir, dir)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	nj, _ := rep["notJudged"].([]any)
	if len(nj) != 1 || nj[0].(map[string]any)["path"] != "spec.kubernetesVersion" || nj[0].(map[string]any)["deciding"] != true {
		t.Fatalf("notJudged %v", rep["notJudged"])
	}
	imports, _ := rep["imports"].([]any)
	if len(imports) != 1 {
		t.Fatalf("imports %v", rep["imports"])
	}
	im := imports[0].(map[string]any)
	unknown, _ := im["unknown"].([]any)
	skipped, _ := im["skipped"].([]any)
	if im["from"] != "terraform" || len(unknown) == 0 || len(skipped) == 0 {
		t.Fatalf("import lists %v", im)
	}
	if u := unknown[0].(map[string]any); u["reason"] == "" || u["origin"].(map[string]any)["line"].(float64) == 0 {
		t.Errorf("unknown without reason or position: %v", u)
	}

	streams, _, out, _ := TestStreams()
	Run(context.Background(), []string{"validate", "--as-of", "2026-12-01", "--root", dir, dir}, streams)
	text := out.String()
	for _, want := range []string{"2 check(s) not judged: the Kubernetes version is unknown (", "data.google_container_engine_versions.gke", "pass --kubernetes-version", "ok: 0 error(s), 1 warning(s), 0 info, 2 check(s) not judged"} {
		if !strings.Contains(text, want) {
			t.Errorf("table lacks %q:\n%s", want, text)
		}
	}
}

// TestValidateNoPoolJSON: an import that finds no GPU node pool still
// writes the JSON document, with the error and the import's lists, and
// keeps its exit code.
func TestValidateNoPoolJSON(t *testing.T) {
	dir := t.TempDir()
	tf := "variable \"gpu\" { type = bool }\nmodule \"eks_data_addons\" {\n  source = \"aws-ia/eks-data-addons/aws\"\n  enable_nvidia_device_plugin = var.gpu\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(tf), 0o644); err != nil {
		t.Fatal(err)
	}
	code, rep, errOut := validateJSON(t, "--root", dir, dir)
	if code != ExitUsage || !strings.Contains(errOut, "no GPU node pool found") {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	imports, _ := rep["imports"].([]any)
	if len(imports) != 1 {
		t.Fatalf("imports %v", rep["imports"])
	}
	im := imports[0].(map[string]any)
	if !strings.Contains(im["error"].(string), "no GPU node pool found") || len(im["skipped"].([]any)) != 1 || len(im["unknown"].([]any)) != 1 {
		t.Errorf("import %v", im)
	}
	// the table output prints nothing on stdout, as before
	streams, _, out, _ := TestStreams()
	if c := Run(context.Background(), []string{"validate", "--root", dir, dir}, streams); c != ExitUsage || out.Len() != 0 {
		t.Errorf("table: exit %d, stdout %q", c, out)
	}
}
