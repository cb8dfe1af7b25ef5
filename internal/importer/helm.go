package importer

import (
	"fmt"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/hashicorp/hcl/v2"

	"github.com/gpuctl/gpuctl/internal/spec"
)

// NVIDIA's charts import reads from helm_release resources.
const (
	chartGPUOperator  = "gpu-operator"
	chartDevicePlugin = "nvidia-device-plugin"
	chartDCGMExporter = "dcgm-exporter"
)

// helmValue is one chart value with where it was set.
type helmValue struct {
	v  any
	at Origin
}

// helmRelease reads a helm_release of one of NVIDIA's charts into addons.
func (t *tfImport) helmRelease(r *tfBlock) {
	for _, o := range t.instancesOf(r) {
		chart, _ := o.get("chart").str()
		// "nvidia/gpu-operator", an OCI URL or a path: the chart is the
		// last element.
		base := chart[strings.LastIndex(chart, "/")+1:]
		switch base {
		case chartGPUOperator, chartDevicePlugin, chartDCGMExporter:
		default:
			what := "a chart that is not one of NVIDIA's GPU charts (gpu-operator, nvidia-device-plugin, dcgm-exporter)"
			if chart == "" {
				what = "chart unknown"
			}
			t.b.skip(o.name(), what, o.origin())
			continue
		}
		vals := map[string]helmValue{}
		var valuesExpr hcl.Expression
		if ho, ok := o.(*hclObj); ok {
			valuesExpr = ho.expr("values")
		}
		for _, vo := range valObjs(t.e, o.get("values"), valuesExpr) {
			vo, ok := vo.(*valObj)
			if !ok {
				t.b.skip(o.name()+" values", "values unknown until Terraform applies", o.origin())
				continue
			}
			s, ok := vo.x.str()
			if !ok {
				if vo.x.unknown() {
					t.b.skip(o.name()+" values", "values unknown until Terraform applies: it depends on "+strings.Join(vo.x.why, ", "), vo.x.at)
				}
				continue
			}
			var m map[string]any
			if err := yaml.Unmarshal([]byte(s), &m); err != nil {
				t.b.skip(o.name()+" values", "values are not YAML: "+err.Error(), vo.x.at)
				continue
			}
			flatten("", m, vo.x.at, vals)
		}
		for _, sb := range append(o.blocks("set"), o.blocks("set_string")...) {
			n, _ := sb.get("name").str()
			v := sb.get("value")
			if n == "" {
				continue
			}
			if v.unknown() {
				if path, ok := helmKeys[base][strings.ReplaceAll(n, `\.`, ".")]; ok {
					t.b.unknowns = append(t.b.unknowns, Unknown{Path: path, What: o.name() + " set " + n, Because: v.why, Origin: v.at})
				} else {
					t.b.skip(o.name()+" set "+n, "no gpuctl spec field (and its value is unknown until Terraform applies: it depends on "+strings.Join(v.why, ", ")+")", v.at)
				}
				continue
			}
			s, _ := v.str()
			vals[strings.ReplaceAll(n, `\.`, ".")] = helmValue{v: s, at: v.at}
		}
		version := o.get("version")
		t.addon(base, o, version, vals)
	}
}

// flatten writes the leaves of a values tree as dotted keys.
func flatten(prefix string, m map[string]any, at Origin, out map[string]helmValue) {
	for k, v := range m {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		if sub, ok := v.(map[string]any); ok {
			flatten(key, sub, at, out)
			if len(sub) == 0 {
				out[key] = helmValue{v: sub, at: at}
			}
			continue
		}
		out[key] = helmValue{v: v, at: at}
	}
}

// boolValue is a chart value as a bool ("true", true).
func boolValue(h helmValue) (bool, bool) {
	switch v := h.v.(type) {
	case bool:
		return v, true
	case string:
		switch strings.ToLower(v) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	return false, false
}

// helmKeys are the chart values import reads, by chart: value key to the
// spec path it sets.
var helmKeys = map[string]map[string]string{
	chartGPUOperator: {
		"driver.enabled":          "spec.addons.gpuOperator.driver.enabled",
		"driver.version":          "spec.addons.gpuOperator.driver.version",
		"driver.kernelModuleType": "spec.addons.gpuOperator.driver.kernelModuleType",
		"toolkit.enabled":         "spec.addons.gpuOperator.toolkit.enabled",
		"devicePlugin.enabled":    "spec.addons.gpuOperator.devicePlugin.enabled",
		"migManager.enabled":      "spec.addons.gpuOperator.migManager.enabled",
		"dcgmExporter.enabled":    "spec.addons.gpuOperator.dcgmExporter.enabled",
		"cdi.enabled":             "spec.addons.gpuOperator.cdi.enabled",
	},
	chartDCGMExporter: {"serviceMonitor.enabled": "spec.addons.dcgmExporter.serviceMonitor"},
}

// helmKeyRead reports whether import reads chart value key of chart.
func helmKeyRead(chart, key string) bool {
	if _, ok := helmKeys[chart][key]; ok {
		return true
	}
	switch chart {
	case chartGPUOperator:
		return key == "toolkit.env" || strings.HasPrefix(key, "toolkit.env[")
	case chartDevicePlugin:
		return strings.HasPrefix(key, "nodeSelector.")
	}
	return false
}

// unreadValues lists as skipped the chart values of a release that no
// spec field holds.
func (t *tfImport) unreadValues(chart string, o obj, vals map[string]helmValue) {
	var keys []string
	for k := range vals {
		if !helmKeyRead(chart, k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return
	}
	sort.Strings(keys)
	at := vals[keys[0]].at
	t.b.skip(o.name()+" values "+strings.Join(keys, ", "), "no gpuctl spec field: gpuctl generate writes its own values for the chart", at)
}

func (t *tfImport) addon(chart string, o obj, version val, vals map[string]helmValue) {
	b := t.b
	a := &b.cs.Spec.Addons
	t.unreadValues(chart, o, vals)
	setBool := func(path, key string, dst **bool) {
		if h, ok := vals[key]; ok {
			if v, ok := boolValue(h); ok {
				*dst = &v
				b.at(path, h.at)
			}
		}
	}
	setStr := func(path, key string, dst *string) {
		if h, ok := vals[key]; ok && h.v != nil {
			*dst = fmt.Sprint(h.v)
			b.at(path, h.at)
		}
	}
	// enable turns on the addon at path, an addon with enabled and version
	// fields, from the chart's release.
	enable := func(path string, enabled *bool, ver *string) {
		*enabled = true
		b.at(path, o.origin())
		b.at(path+".enabled", o.origin())
		b.str(path+".version", version, ver)
	}
	switch chart {
	case chartGPUOperator:
		g := &a.GPUOperator
		enable("spec.addons.gpuOperator", &g.Enabled, &g.Version)
		setBool("spec.addons.gpuOperator.driver.enabled", "driver.enabled", &g.Driver.Enabled)
		setStr("spec.addons.gpuOperator.driver.version", "driver.version", &g.Driver.Version)
		setStr("spec.addons.gpuOperator.driver.kernelModuleType", "driver.kernelModuleType", &g.Driver.KernelModuleType)
		setBool("spec.addons.gpuOperator.toolkit.enabled", "toolkit.enabled", &g.Toolkit.Enabled)
		setBool("spec.addons.gpuOperator.devicePlugin.enabled", "devicePlugin.enabled", &g.DevicePlugin.Enabled)
		setBool("spec.addons.gpuOperator.migManager.enabled", "migManager.enabled", &g.MIGManager.Enabled)
		setBool("spec.addons.gpuOperator.dcgmExporter.enabled", "dcgmExporter.enabled", &g.DCGMExporter.Enabled)
		setBool("spec.addons.gpuOperator.cdi.enabled", "cdi.enabled", &g.CDI.Enabled)
		if env := toolkitEnv(vals); len(env) > 0 {
			g.Toolkit.Env = env
			b.at("spec.addons.gpuOperator.toolkit.env", vals["toolkit.env"].at)
		}
		if spec.EnabledOr(g.DevicePlugin.Enabled, true) && a.DevicePlugin.Provider == "" {
			// The Operator runs NVIDIA's device plugin unless told not to.
			a.DevicePlugin.Provider = spec.DevicePluginGPUOperator
			b.at("spec.addons.devicePlugin.provider", o.origin())
		}
	case chartDevicePlugin:
		d := &a.DevicePlugin
		d.Provider = spec.DevicePluginHelm
		b.at("spec.addons.devicePlugin", o.origin())
		b.at("spec.addons.devicePlugin.provider", o.origin())
		if b.str("spec.addons.devicePlugin.version", version, &d.Version) {
			d.Version = strings.TrimPrefix(d.Version, "v")
		}
		sel := map[string]string{}
		var at Origin
		for k, h := range vals {
			if rest, ok := strings.CutPrefix(k, "nodeSelector."); ok {
				sel[rest] = fmt.Sprint(h.v)
				at = h.at
			}
		}
		if len(sel) > 0 {
			d.NodeSelector = sel
			b.at("spec.addons.devicePlugin.nodeSelector", at)
		}
	case chartDCGMExporter:
		d := &a.DCGMExporter
		enable("spec.addons.dcgmExporter", &d.Enabled, &d.Version)
		var sm *bool
		setBool("spec.addons.dcgmExporter.serviceMonitor", "serviceMonitor.enabled", &sm)
		d.ServiceMonitor = spec.EnabledOr(sm, false)
	}
}

// toolkitEnv reads toolkit.env, a list of {name, value} in the chart.
func toolkitEnv(vals map[string]helmValue) map[string]string {
	h, ok := vals["toolkit.env"]
	if !ok {
		// set blocks write toolkit.env[0].name / .value
		out := map[string]string{}
		var idx []string
		for k := range vals {
			if strings.HasPrefix(k, "toolkit.env[") && strings.HasSuffix(k, "].name") {
				idx = append(idx, strings.TrimSuffix(k, ".name"))
			}
		}
		sort.Strings(idx)
		for _, i := range idx {
			out[fmt.Sprint(vals[i+".name"].v)] = fmt.Sprint(vals[i+".value"].v)
		}
		return out
	}
	list, ok := h.v.([]any)
	if !ok {
		return nil
	}
	out := map[string]string{}
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			out[fmt.Sprint(m["name"])] = fmt.Sprint(m["value"])
		}
	}
	return out
}
