package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestNotJudgedLines: the table says above the summary which unknown fact
// kept how many checks from being judged and how to give it, and the
// summary line counts them; SARIF carries them as a run property.
func TestNotJudgedLines(t *testing.T) {
	r := NewValidationReport("gpuctl.dev/v1alpha1", []string{"infra"}, "2026-12-01", []string{""}, nil)
	r.NotJudged = []NotJudged{{File: "infra", Path: "spec.kubernetesVersion", What: "the Kubernetes version",
		Reason: "it depends on data.google_container_engine_versions.gke", Hint: "pass --kubernetes-version VERSION",
		Checks: []string{"GKE-DRIVER-OPTION (pool l4)", "GKE-K8S-SUPPORT"}, Deciding: true}}
	var b bytes.Buffer
	if err := ValidationText(&b, r, Styles{}, false); err != nil {
		t.Fatal(err)
	}
	want := "2 check(s) not judged: the Kubernetes version is unknown (it depends on data.google_container_engine_versions.gke); pass --kubernetes-version VERSION\n" +
		"ok: 0 error(s), 0 warning(s), 0 info, 2 check(s) not judged (as of 2026-12-01; environments: base)\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	if err := ValidationSARIF(&b, r, "test", func(string) (RuleInfo, bool) { return RuleInfo{}, false }); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Runs []struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b.Bytes(), &log); err != nil || len(log.Runs) != 1 || !strings.Contains(string(log.Runs[0].Properties["gpuctl/notJudged"]), "spec.kubernetesVersion") {
		t.Errorf("SARIF run properties: %v %s", err, b.String())
	}
	// none: the summary line as before, [] in JSON
	r.NotJudged = []NotJudged{}
	b.Reset()
	_ = ValidationText(&b, r, Styles{}, false)
	if strings.Contains(b.String(), "not judged") {
		t.Errorf("nothing not judged, got %q", b.String())
	}
	js, _ := json.Marshal(r)
	if !strings.Contains(string(js), `"notJudged":[]`) || !strings.Contains(string(js), `"imports":[]`) {
		t.Errorf("JSON %s", js)
	}
}
