package importer

import (
	"strings"
	"testing"
)

// TestAddonDefaults: the call's version constraint picks the release row
// of eks-data-addons whose defaults apply; no constraint picks the newest
// with a note; each row cites its commit.
func TestAddonDefaults(t *testing.T) {
	for _, c := range []struct {
		constraint, operator, plugin string
		note                         bool
	}{
		{"", "v25.3.0", "0.14.4", true},
		{"~> 1.37", "v25.3.0", "0.14.4", false},
		{"1.37.1", "v24.9.2", "0.14.4", false},
		{"1.36.0", "v24.9.2", "0.14.4", false},
		{"1.33.0", "v23.3.2", "0.14.4", false},
		{"1.30.0", "v23.3.2", "", false},
	} {
		r, note, ok := addonDefaults(moduleDataAddons, c.constraint)
		if !ok {
			t.Fatalf("%q: no row", c.constraint)
		}
		if got := r.fact(factOperatorVersion); got != c.operator {
			t.Errorf("%q: operator %q, want %q", c.constraint, got, c.operator)
		}
		if got := r.fact(factPluginVersion); got != c.plugin {
			t.Errorf("%q: plugin %q, want %q", c.constraint, got, c.plugin)
		}
		if (note != "") != c.note {
			t.Errorf("%q: note %q", c.constraint, note)
		}
		if !strings.Contains(r.Source, r.Commit) || len(r.Commit) != 40 {
			t.Errorf("%q: source %s does not cite commit %s", c.constraint, r.Source, r.Commit)
		}
		if c.plugin != "" && !strings.Contains(r.fact(factPluginValues), "gfd:") {
			t.Errorf("%q: plugin values %q", c.constraint, r.fact(factPluginValues))
		}
	}
	if _, _, ok := addonDefaults(moduleBlueprintsAddons, ""); ok {
		t.Error("eks-blueprints-addons has no NVIDIA defaults")
	}
}
