package cli

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// TestValidateTakesTodayFromTheFactoryClock: without --as-of, lifecycle
// rules are evaluated at the factory clock's date (UTC), not the process's.
func TestValidateTakesTodayFromTheFactoryClock(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		now  time.Time
		want string
	}{
		{time.Date(2027, 3, 1, 23, 30, 0, 0, time.FixedZone("UTC-5", -5*3600)), "2027-03-02"},
		{time.Date(2025, 1, 15, 0, 0, 1, 0, time.UTC), "2025-01-15"},
	} {
		f := NewFactory()
		f.Now = func() time.Time { return tc.now }
		streams, _, out, errOut := TestStreams()
		code := RunWithFactory(context.Background(), []string{"validate", "-o", "json", "../../examples/gke-h100-l4.yaml"}, streams, f)
		if code != ExitOK && code != ExitCheckFailed {
			t.Fatalf("validate exit %d: %s", code, errOut)
		}
		var rep struct {
			AsOf string `json:"asOf"`
		}
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatalf("validate -o json: %v\n%s", err, out)
		}
		if rep.AsOf != tc.want {
			t.Errorf("clock %v: asOf %q, want %q", tc.now, rep.AsOf, tc.want)
		}
	}
}
