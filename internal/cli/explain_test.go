package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/probe"
	"github.com/gpuctl/gpuctl/internal/rules"
)

// TestExplainListsBothAreas: `explain -o json` lists every validation rule,
// every parse finding and every input finding of validate's documents
// once, each with its area, and no ID of one kind equals one of another
// without case (a lookup would be ambiguous).
func TestExplainListsBothAreas(t *testing.T) {
	streams, _, out, errOut := TestStreams()
	if code := Run(context.Background(), []string{"explain", "-o", "json"}, streams); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var list struct {
		Kind  string `json:"kind"`
		Items []struct {
			ID      string   `json:"id"`
			Area    string   `json:"area"`
			Sources []string `json:"sources"`
		} `json:"items"`
	}
	if err := json.Unmarshal(out.Bytes(), &list); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, r := range rules.Rules() {
		want[r.ID] = areaValidate
	}
	for _, r := range probe.FindingRules() {
		if _, dup := want[strings.ToUpper(r.ID)]; dup {
			t.Errorf("parse finding %s has the ID of a validation rule", r.ID)
		}
		want[r.ID] = areaParse
	}
	for id := range inputRules {
		if _, dup := want[id]; dup {
			t.Errorf("input finding %s has the ID of another rule", id)
		}
		want[id] = areaInput
	}
	if list.Kind != "RuleList" || len(list.Items) != len(want) {
		t.Fatalf("kind %q, %d items; want RuleList with %d", list.Kind, len(list.Items), len(want))
	}
	for _, it := range list.Items {
		if want[it.ID] != it.Area {
			t.Errorf("%s: area %q, want %q", it.ID, it.Area, want[it.ID])
		}
		if it.Area == areaParse && len(it.Sources) == 0 {
			t.Errorf("%s: no sources", it.ID)
		}
	}
}

// TestExplainNearestCoversBothAreas: a misspelt ID is answered with the
// nearest IDs of either kind.
func TestExplainNearestCoversBothAreas(t *testing.T) {
	for _, tc := range []struct{ id, want string }{
		{"nccl-wrong-result", "nccl-wrong-results"},
		{"ROW-REMAP-PENDNG", "row-remap-pending"},
		{"CUDA-DRIVER-MINIMUM", "CUDA-DRIVER-MIN"},
		{"SPEC-DECOD", "SPEC-DECODE"},
	} {
		if got := nearestExplainRules(tc.id, 3); len(got) == 0 || got[0] != tc.want {
			t.Errorf("nearest(%q) = %v, want %s first", tc.id, got, tc.want)
		}
	}
}

// TestExplainKnowsEveryDocumentRule: every rule a validate document can
// carry for an input it did not validate is one explain describes.
func TestExplainKnowsEveryDocumentRule(t *testing.T) {
	for _, id := range []string{ruleSpecDecode, ruleImportDecode, ruleUsage} {
		r, ok := lookupExplainRule(strings.ToLower(id))
		if !ok {
			t.Errorf("explain does not know %s", id)
			continue
		}
		if r.Area != areaInput || r.Severity != "error" || r.Summary == "" || r.Fix == "" || r.Long == "" {
			t.Errorf("%s: %+v", id, r)
		}
	}
}
