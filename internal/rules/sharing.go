package rules

import (
	"fmt"

	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// checkSharing: replicas, MPS on MIG, fields the strategy ignores.
func (v *validator) checkSharing(pc *matrix.PoolFacts) {
	p := pc.Pool
	sh := p.GPU.Sharing
	switch sh.Strategy {
	case spec.SharingTimeSlicing, spec.SharingMPS:
		if sh.Replicas < 2 {
			v.add(RuleSharingReplicas, "", pc.Field(".gpu.sharing.replicas"), fmt.Sprintf("pool %s: %s with replicas %d; the device plugin needs at least 2", p.Name, sh.Strategy, sh.Replicas),
				"Set gpu.sharing.replicas to 2 or more.", srcDevicePlugin)
		}
		if sh.Strategy == spec.SharingMPS && sh.MIGProfile != "" {
			v.add(RuleSharingMPSMIG, "", pc.Field(".gpu.sharing.migProfile"), fmt.Sprintf("pool %s: MPS cannot share MIG devices (migProfile %s); MPS shares only full GPUs", p.Name, sh.MIGProfile), "", srcDevicePlugin)
		}
	case spec.SharingMIG:
		if sh.Replicas > 0 {
			v.add(RuleSharingFields, "", pc.Field(".gpu.sharing.replicas"), fmt.Sprintf("pool %s: replicas %d has no effect with strategy mig (time-slice the MIG devices with strategy time-slicing and a migProfile)", p.Name, sh.Replicas), "")
		}
	case "", spec.SharingNone:
		if sh.Replicas > 0 {
			v.add(RuleSharingFields, "", pc.Field(".gpu.sharing.replicas"), fmt.Sprintf("pool %s: replicas %d has no effect without a sharing strategy", p.Name, sh.Replicas), "Set strategy: time-slicing or mps, or remove replicas.")
		}
		if sh.MIGProfile != "" {
			v.add(RuleSharingFields, "", pc.Field(".gpu.sharing.migProfile"), fmt.Sprintf("pool %s: migProfile %s has no effect without strategy mig", p.Name, sh.MIGProfile), "Set strategy: mig, or remove migProfile.")
		}
	}
}
