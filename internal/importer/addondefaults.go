package importer

import (
	_ "embed"
	"fmt"
)

// data/addondefaults.yaml: what a registry add-on module installs when a
// call switches one of NVIDIA's add-ons on and leaves its helm config
// unset, by module and version range, each row with its source and commit.

//go:embed data/addondefaults.yaml
var addonDefaultsYAML []byte

// addonDefaultsFacts are the decoded facts (checked when the package
// loads).
var addonDefaultsFacts = mustModDefaults(addonDefaultsYAML)

// Keys of a row's addons.
const (
	factPluginVersion   = "device_plugin_version"
	factPluginValues    = "device_plugin_values"
	factOperatorVersion = "gpu_operator_version"
)

// addonDefaults is the row of add-on module source that the call's
// version constraint selects, and the note to list when no constraint
// chose it (see moduleDefaults).
func addonDefaults(source, constraint string) (row defaultsRow, note string, ok bool) {
	return defaultsIn(addonDefaultsFacts, source, constraint)
}

// fact is the string fact key of r's addons; "" when the row has none.
func (r defaultsRow) fact(key string) string {
	if s, ok := r.Addons[key].(string); ok {
		return s
	}
	return ""
}

// where is the row as a note on an origin of chart's default: "module
// default: SOURCE (v1.38.0)", the device plugin's file being source_2.
func (r defaultsRow) where(chart string) string {
	src := r.Source
	if chart == chartDevicePlugin && r.Source2 != "" {
		src = r.Source2
	}
	return fmt.Sprintf("module default: %s (%s)", src, r.Release)
}
