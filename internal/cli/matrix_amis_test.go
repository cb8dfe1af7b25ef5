package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestMatrixAMIs: `matrix amis` filters by AMI type, Kubernetes minor and
// driver; the JSON rows are the releases of data/amis.yaml.
func TestMatrixAMIs(t *testing.T) {
	streams, _, out, _ := TestStreams()
	args := []string{"matrix", "amis", "--ami-type", "AL2023_x86_64_NVIDIA", "--kubernetes", "1.34", "--driver", "580.95.05", "-o", "json"}
	if code := Run(context.Background(), args, streams); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	var l amiList
	if err := json.Unmarshal(out.Bytes(), &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Items) == 0 || l.Items[0].Release != "1.34.1-20251112" {
		t.Fatalf("items %+v: want 1.34.1-20251112 (v20251112's notes) first", l.Items)
	}
	for _, r := range l.Items {
		if r.AMIType != "AL2023_x86_64_NVIDIA" || r.Kubernetes != "1.34" || r.Driver != "580.95.05" || !strings.HasPrefix(r.Source, "https://") {
			t.Errorf("row %+v does not match the filters", r)
		}
	}
	streams, _, out, _ = TestStreams()
	if code := Run(context.Background(), []string{"matrix", "amis", "--driver", "470.256.02"}, streams); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	if lines := strings.Count(out.String(), "\n"); lines != 1 {
		t.Errorf("470.256.02: want only the header, got %q", out.String())
	}
}

// TestMatrixAMIsBadFilters: a filter that can match nothing by its form
// (an AMI type without a release table, a Kubernetes version that is not
// X.Y, a driver that is not a version) is a usage error (exit 2) naming
// the flag, not an empty list.
func TestMatrixAMIsBadFilters(t *testing.T) {
	for flag, value := range map[string]string{"--ami-type": "AL2023_NVIDIA", "--kubernetes": "abc", "--driver": "latest"} {
		streams, _, out, errOut := TestStreams()
		if code := Run(context.Background(), []string{"matrix", "amis", flag, value}, streams); code != ExitUsage {
			t.Errorf("%s %s: exit %d, want %d", flag, value, code, ExitUsage)
		}
		if out.Len() != 0 || !strings.Contains(errOut.String(), flag+` "`+value+`"`) {
			t.Errorf("%s %s: stdout %q, stderr %q", flag, value, out.String(), errOut.String())
		}
	}
}
