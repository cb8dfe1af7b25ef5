package rules

import (
	"fmt"
	"strings"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// checkEFA: EFA interfaces, plugin and provider on EKS.
func (v *validator) checkEFA(pc *matrix.PoolFacts, env map[string]string, envPath string) {
	p := pc.Pool
	m := pc.Machine
	if !p.EFA.Enabled {
		v.checkEFAOff(pc)
		return
	}
	if m != nil && !m.EFA && !m.Family {
		v.add(RuleEFAUnsupported, "", pc.Field(".efa.enabled"), fmt.Sprintf("pool %s: %s does not support EFA", p.Name, m.Name), "", m.Source)
		return
	}
	v.checkEFAInterfaces(pc)
	v.checkEFAPlugin(pc, env, envPath)
}

// checkEFAOff: a pool without EFA, where the plugin or the training job
// needs it (NCCL-EFA-PLUGIN, EFA-DISABLED).
func (v *validator) checkEFAOff(pc *matrix.PoolFacts) {
	p := pc.Pool
	m := pc.Machine
	if p.NCCL.Plugin == "aws-ofi-nccl" {
		v.add(RuleNCCLEFAPlugin, diag.SeverityWarning, pc.Field(".efa.enabled"), fmt.Sprintf("pool %s: nccl.plugin is aws-ofi-nccl but the pool requests no EFA interfaces, so the plugin has nothing to drive", p.Name), "Set efa.enabled: true.", srcEFANCCL)
	}
	if m != nil && m.EFA && m.GPUCount >= 8 && pc.Training() && p.Autoscaling.Max != 1 {
		v.add(RuleEFADisabled, "", pc.Field(".efa.enabled"), fmt.Sprintf("pool %s: training on %s (EFA on %d network cards) without EFA: NCCL between nodes runs over TCP on ENA", p.Name, m.Name, m.NetworkCards), "", srcEFANCCL)
	}
}

// checkEFAInterfaces: one EFA interface per network card
// (EFA-INTERFACES).
func (v *validator) checkEFAInterfaces(pc *matrix.PoolFacts) {
	p := pc.Pool
	m := pc.Machine
	if m == nil || m.NetworkCards == 0 || p.EFA.Interfaces == 0 {
		return
	}
	switch {
	case p.EFA.Interfaces > m.NetworkCards:
		v.add(RuleEFAInterfaces, diag.SeverityError, pc.Field(".efa.interfaces"), fmt.Sprintf("pool %s: %d EFA interfaces requested, but %s has %d network cards (one EFA interface each)", p.Name, p.EFA.Interfaces, m.Name, m.NetworkCards),
			fmt.Sprintf("Set efa.interfaces: %d (or 0).", m.NetworkCards), m.Source)
	case p.EFA.Interfaces < m.NetworkCards:
		v.add(RuleEFAInterfaces, diag.SeverityWarning, pc.Field(".efa.interfaces"),
			fmt.Sprintf("pool %s: %d EFA interfaces requested, but %s has %d network cards: %.0f%% of its %s EFA bandwidth stays unused", p.Name, p.EFA.Interfaces, m.Name, m.NetworkCards, 100*float64(m.NetworkCards-p.EFA.Interfaces)/float64(m.NetworkCards), strings.TrimSuffix(networkText(m), " Gbps")+" Gbps"),
			fmt.Sprintf("Set efa.interfaces: %d (or 0 for one per card).", m.NetworkCards), m.Source)
	}
}

// checkEFAPlugin: NCCL reaches EFA through aws-ofi-nccl and libfabric's
// EFA provider (NCCL-EFA-PLUGIN).
func (v *validator) checkEFAPlugin(pc *matrix.PoolFacts, env map[string]string, envPath string) {
	p := pc.Pool
	switch plugin := p.NCCL.Plugin; plugin {
	case "aws-ofi-nccl":
	case "":
		// The spec does not say which images run; the usual EFA training
		// images ship aws-ofi-nccl.
		v.add(RuleNCCLEFAPlugin, diag.SeverityInfo, pc.Field(".nccl.plugin"), fmt.Sprintf("pool %s: EFA is enabled and nccl.plugin is unset: NCCL uses EFA only through aws-ofi-nccl, which the usual EFA training images carry; without it NCCL falls back to TCP over ENA", p.Name),
			"Set nccl.plugin: aws-ofi-nccl to say the images carry it (and nccl.env.FI_PROVIDER: efa).", srcEFANCCL, srcAWSOFINCCL)
	default:
		v.add(RuleNCCLEFAPlugin, diag.SeverityWarning, pc.Field(".nccl.plugin"), fmt.Sprintf("pool %s: EFA is enabled but nccl.plugin is %s: NCCL uses EFA only through aws-ofi-nccl, so it falls back to TCP over ENA", p.Name, plugin),
			"Set nccl.plugin: aws-ofi-nccl (images with the plugin) and nccl.env.FI_PROVIDER: efa.", srcEFANCCL, srcAWSOFINCCL)
	}
	switch fp, ok := env["FI_PROVIDER"]; {
	case !ok:
		v.add(RuleNCCLEFAPlugin, diag.SeverityInfo, envPath, fmt.Sprintf("pool %s: FI_PROVIDER is not set, so the plugin picks the libfabric provider; FI_PROVIDER=efa makes the EFA provider explicit", p.Name), "Add nccl.env.FI_PROVIDER: efa.", srcEFANCCL)
	case strings.TrimSpace(fp) != "efa":
		v.add(RuleNCCLEFAPlugin, diag.SeverityWarning, envPath+spec.Key("FI_PROVIDER"), fmt.Sprintf("pool %s: FI_PROVIDER=%s selects another libfabric provider than EFA", p.Name, fp), "Set FI_PROVIDER: efa.", srcEFANCCL)
	}
}

// networkText is an EFA instance type's network bandwidth for messages
// ("3200 Gbps"), "EFA" when the catalogue does not give it.
func networkText(m *matrix.Machine) string {
	for _, it := range matrix.Facts().AWS().InstanceTypes {
		if it.Name == m.Name && it.Network != "" {
			return it.Network
		}
	}
	return "EFA"
}
