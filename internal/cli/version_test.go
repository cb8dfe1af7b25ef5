package cli

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"testing"
)

// An unstamped build (go build without -ldflags: "devel") shows the VCS
// revision Go recorded and the commit's date in its version line; a
// stamped or module version is left as it is.
func TestVersionLine(t *testing.T) {
	rev := "abc1234def5678abc1234def5678abc1234def56"
	for _, tc := range []struct{ version, commit, date, want string }{
		{"devel", rev, "2026-12-03T09:15:00Z", "devel (abc1234, 2026-12-03)"},
		{"devel", rev + "-dirty", "2026-12-03T09:15:00Z", "devel (abc1234-dirty, 2026-12-03)"},
		{"devel", rev, "", "devel (abc1234)"},
		{"devel", "", "", "devel"},
		{"v1.2.3", rev, "2026-12-03T09:15:00Z", "v1.2.3"},
		{"v0.0.0-20261203091500-abc1234def56", rev, "2026-12-03T09:15:00Z", "v0.0.0-20261203091500-abc1234def56"},
	} {
		if got := versionLine(tc.version, tc.commit, tc.date); got != tc.want {
			t.Errorf("versionLine(%q, %q, %q) = %q, want %q", tc.version, tc.commit, tc.date, got, tc.want)
		}
	}
}

func TestVCSStamp(t *testing.T) {
	c, d := vcsStamp(map[string]string{"vcs.revision": "abc", "vcs.time": "2026-12-03T09:15:00Z", "vcs.modified": "true"})
	if c != "abc-dirty" || d != "2026-12-03T09:15:00Z" {
		t.Errorf("vcsStamp = %q, %q", c, d)
	}
	if c, d := vcsStamp(map[string]string{}); c != "" || d != "" {
		t.Errorf("vcsStamp of nothing = %q, %q", c, d)
	}
}

// version -o json keeps its keys.
func TestVersionJSONKeys(t *testing.T) {
	streams, _, out, errOut := TestStreams()
	if code := Run(context.Background(), []string{"version", "-o", "json"}, streams); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"version", "commit", "buildDate", "goVersion", "platform", "matrixAsOf"} {
		if _, ok := m[k]; !ok {
			t.Errorf("version -o json has no %q: %v", k, slices.Sorted(maps.Keys(m)))
		}
	}
}
