package record

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// TemplateField is one field of the acceptance practice's node record
// template (docs/accept.md, "The record template"): its name as the
// template writes it ("OS / kernel"), the predicate's keys that hold it
// ("node.osImage"), what this record holds there as one line ("" when
// nothing), and Missing, what the record cannot hold of it and why (""
// when it holds all of it).
type TemplateField struct {
	Field   string   `json:"field"`
	Keys    []string `json:"keys"`
	Value   string   `json:"value"`
	Missing string   `json:"missing,omitempty"`
}

// templateFields are the template's fields in its order, each with the
// keys that hold it, how its value is written, and what no record holds.
var templateFields = []struct {
	field   string
	keys    []string
	value   func(p *Predicate) string
	missing string
}{
	{"Node", []string{"node.name", "node.providerID", "node.pool", "node.zone"}, func(p *Predicate) string {
		return join(" ", p.Node.Name, paren(join(", ", p.Node.ProviderID, p.Node.Pool, p.Node.Zone)))
	}, ""},
	{"Hardware SKU / Serial", []string{"node.instanceType", "hardware.gpuProduct", "hardware.serials", "hardware.uuids"}, func(p *Predicate) string {
		return join("; ", p.Node.InstanceType, p.Hardware.GPUProduct, list("GPU serials", p.Hardware.Serials))
	}, "the chassis' serial: no pod-level output gpuctl reads shows it (dmidecode needs the host)"},
	{"BMC / BIOS / GPU / NIC firmware", []string{"hardware.vbios", "hardware.inforom", "network.devices[].firmware"}, func(p *Predicate) string {
		return join("; ", list("VBIOS", p.Hardware.VBIOS), list("InfoROM", p.Hardware.InfoROM), list("NIC firmware", nicFirmware(p.Network)))
	}, "BMC and BIOS versions: not visible from a pod (they need the BMC or the host's DMI tables)"},
	{"OS / kernel", []string{"node.osImage", "node.kernelVersion"}, func(p *Predicate) string {
		return join(" / ", p.Node.OSImage, p.Node.KernelVersion)
	}, ""},
	{"containerd / kubelet", []string{"node.containerRuntime", "node.kubelet"}, func(p *Predicate) string {
		return join(" / ", p.Node.ContainerRuntime, p.Node.Kubelet)
	}, ""},
	{"GPU driver / CUDA compatibility", []string{"driver.version", "driver.cuda"}, func(p *Predicate) string {
		if p.Driver.Version == "" && p.Driver.CUDA == "" {
			return ""
		}
		return orDashValue(p.Driver.Version) + " / CUDA " + orDashValue(p.Driver.CUDA)
	}, ""},
	{"GPU Operator / Device Plugin or DRA", []string{"node.gpuOperator", "node.devicePlugin"}, func(p *Predicate) string {
		return join(" / ", p.Node.GPUOperator, p.Node.DevicePlugin)
	}, "a DRA driver: gpuctl finds the device plugin and GPU Operator pods only"},
	{"NIC / RDMA driver", []string{"network.devices[].kind", "network.devices[].model", "network.devices[].boardID"}, func(p *Predicate) string {
		return nicModels(p.Network)
	}, "the driver's version (MLNX_OFED, efa): no output the network stage reads shows it; kind names the driver family"},
	{"GPU count and health", []string{"hardware.gpuCount", "gpuHealth"}, func(p *Predicate) string {
		if p.Hardware.GPUCount == 0 && len(p.GPUHealth) == 0 {
			return ""
		}
		return fmt.Sprintf("%d GPUs, %d health findings", p.Hardware.GPUCount, len(p.GPUHealth))
	}, ""},
	{"PCIe / NVLink / NVSwitch", []string{"interconnect.pcie", "interconnect.gpuLinks", "topology"}, func(p *Predicate) string {
		return join("; ", list("PCIe", p.Interconnect.PCIe), list("GPU links", p.Interconnect.GPULinks))
	}, "NVSwitch itself: topo -m shows NV# links, not the switches"},
	{"DCGM diagnostics", []string{"dcgm.verdict", "dcgm.level", "dcgm.reason"}, func(p *Predicate) string {
		if p.DCGM == nil {
			return ""
		}
		return join(", ", string(p.DCGM.Verdict), levelText(p.DCGM.Level))
	}, ""},
	{"NCCL / RDMA / storage baseline", []string{"baselinesMet", "nccl", "network"}, func(p *Predicate) string {
		return baselinesText(p.BaselinesMet)
	}, "storage: gpuctl measures no storage"},
	{"Representative training", []string{"framework.checks"}, func(p *Predicate) string {
		return frameworkCheck(p.Framework, "training")
	}, "a representative training run: the framework stage's training check is a short DDP smoke test"},
	{"Representative inference", []string{"framework.checks"}, func(p *Predicate) string {
		return frameworkCheck(p.Framework, "inference")
	}, "a representative inference run: the framework stage's inference check is a smoke test"},
	{"Result / evidence URI", []string{"verdict", "stages", "evidenceBundle.uri"}, func(p *Predicate) string {
		uri := ""
		if p.EvidenceBundle != nil {
			uri = p.EvidenceBundle.URI
		}
		return join("; evidence ", string(p.Verdict), uri)
	}, ""},
}

// Template maps p onto the practice's record template: one field per
// template line in its order (15), each with the keys that hold it and
// this record's value.
func Template(p *Predicate) []TemplateField {
	out := make([]TemplateField, 0, len(templateFields))
	for _, f := range templateFields {
		out = append(out, TemplateField{Field: f.field, Keys: append([]string{}, f.keys...), Value: f.value(p), Missing: f.missing})
	}
	return out
}

// join joins the non-empty parts with sep.
func join(sep string, parts ...string) string {
	var keep []string
	for _, s := range parts {
		if s != "" {
			keep = append(keep, s)
		}
	}
	return strings.Join(keep, sep)
}

func paren(s string) string {
	if s == "" {
		return ""
	}
	return "(" + s + ")"
}

// list is "NAME a, b" of the distinct non-empty values, "" for none.
func list(name string, values []string) string {
	var seen []string
	for _, v := range values {
		if v != "" && !slices.Contains(seen, v) {
			seen = append(seen, v)
		}
	}
	if len(seen) == 0 {
		return ""
	}
	return name + " " + strings.Join(seen, ", ")
}

func nicFirmware(n *NetworkSummary) []string {
	if n == nil {
		return nil
	}
	var out []string
	for _, d := range n.Devices {
		out = append(out, d.Firmware)
	}
	return out
}

// nicModels is "8 x mlx5 MT4129 (board ...)" per distinct kind, model
// and board of the devices.
func nicModels(n *NetworkSummary) string {
	if n == nil {
		return ""
	}
	var order []string
	count := map[string]int{}
	for _, d := range n.Devices {
		k := join(" ", d.Kind, d.Model, paren(join(" ", boardPrefix(d.BoardID), join(":", d.VendorID, d.DeviceID))))
		if count[k] == 0 {
			order = append(order, k)
		}
		count[k]++
	}
	parts := make([]string, 0, len(order))
	for _, k := range order {
		parts = append(parts, fmt.Sprintf("%d x %s", count[k], k))
	}
	return strings.Join(parts, ", ")
}

func boardPrefix(b string) string {
	if b == "" {
		return ""
	}
	return "board " + b
}

func levelText(l int) string {
	if l == 0 {
		return ""
	}
	return "level " + strconv.Itoa(l)
}

// baselinesText is "nccl busBandwidthGBps 470.73 GB/s >= 333 (h100-sxm-x8): met" per entry.
func baselinesText(bs []BaselineMet) string {
	parts := make([]string, 0, len(bs))
	for _, b := range bs {
		parts = append(parts, BaselineText(b))
	}
	return strings.Join(parts, "; ")
}

// BaselineText writes one baseline entry for people: the stage, figure,
// value against the minimum, the baseline and whether it was met
// ("nccl busBandwidthGBps 470.73 GB/s, minimum 333 (h100-sxm-x8,
// embedded): met").
func BaselineText(b BaselineMet) string {
	value := "not shown"
	if b.Value != nil {
		value = strconv.FormatFloat(*b.Value, 'f', -1, 64) + " " + b.Unit
	}
	outcome := "not met"
	switch {
	case b.NotJudged != "":
		outcome = "not judged: " + b.NotJudged
	case b.Met:
		outcome = "met"
	}
	return fmt.Sprintf("%s %s %s, minimum %s %s (%s): %s", b.Stage, b.Figure, value,
		strconv.FormatFloat(b.Minimum, 'f', -1, 64), b.Unit, join(", ", b.Baseline, b.Origin), outcome)
}

// frameworkCheck is the verdict of the framework check named name ("ok",
// "failed"), "" when the stage or the check did not run.
func frameworkCheck(f *FrameworkSummary, name string) string {
	if f == nil {
		return ""
	}
	for _, c := range f.Checks {
		if c.Name == name {
			if c.OK {
				return "framework check " + name + ": ok"
			}
			return "framework check " + name + ": failed"
		}
	}
	return ""
}

// orDashValue is v, "-" when empty (one half of a pair the record has the
// other half of).
func orDashValue(v string) string {
	if v == "" {
		return "-"
	}
	return v
}
