package rules

import (
	"strings"
	"testing"
)

// TestSourcesFollowProvider: a GKE finding does not cite AWS pages when it
// has a source of its own cloud or vendor, and the other way round.
func TestSourcesFollowProvider(t *testing.T) {
	src := []string{"https://cloud.google.com/compute/docs/gpus", "https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html", "https://docs.nvidia.com/x"}
	gke := sourcesFor("gke", src)
	for _, s := range gke {
		if strings.Contains(s, "aws.amazon.com") {
			t.Errorf("gke finding cites %s", s)
		}
	}
	eks := sourcesFor("eks", src)
	for _, s := range eks {
		if strings.Contains(s, "cloud.google.com") {
			t.Errorf("eks finding cites %s", s)
		}
	}
	if len(gke) != 2 || len(eks) != 2 {
		t.Errorf("kept %v / %v", gke, eks)
	}
	only := []string{"https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-k8s-device-plugin.html"}
	if got := sourcesFor("gke", only); len(got) != 1 {
		t.Errorf("a finding must keep its only source, got %v", got)
	}
}
