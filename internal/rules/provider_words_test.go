package rules_test

import (
	"regexp"
	"testing"

	"github.com/gpuctl/gpuctl/internal/rules/rulecases"
)

// amiWord is EKS's word for a node image, as a word ("AMI", "AMIs").
var amiWord = regexp.MustCompile(`\bAMIs?\b`)

// TestGKEFindingsSayNoAMI: a GKE spec's findings speak GKE (node images,
// COS, Ubuntu), never of AMIs, in the message or the fix; every case of
// the table on a GKE spec is judged.
func TestGKEFindingsSayNoAMI(t *testing.T) {
	judged := 0
	for _, c := range rulecases.Cases {
		if c.PipelineOnly() || c.In.Query != nil {
			continue
		}
		cs := c.In.Spec()
		if cs == nil || cs.Spec.Provider != "gke" {
			continue
		}
		judged++
		for _, f := range validate(c.In) {
			if amiWord.MatchString(f.Message) || amiWord.MatchString(f.Fix) {
				t.Errorf("%s: GKE finding %s talks of AMIs: %s / %s", c.Name, f.Rule, f.Message, f.Fix)
			}
		}
	}
	if judged == 0 {
		t.Fatal("no GKE case judged")
	}
}
