//go:build nvml

// Package nvmlmock sets up go-nvml's mock servers (dgxa100, dgxh100) as
// gpuctl's NVML tests use them: the queries the NVML prober makes that the
// servers leave unimplemented answered as a GPU without the feature, or as
// a healthy GPU. Only tests import it.
package nvmlmock

import (
	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// NotSupported gives every query the prober makes that go-nvml's fake
// servers leave unimplemented an ERROR_NOT_SUPPORTED answer, as a GPU
// without the feature would, and the PCI info the bus ID the server assigned.
func NotSupported(s *server.Server) {
	for _, dev := range s.Devices {
		d := dev.(*server.Device)
		busID := d.PciBusID
		pciID := d.Config.PciDeviceId
		d.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) {
			var p nvml.PciInfo
			p.PciDeviceId = pciID
			for i := 0; i < len(busID) && i < len(p.BusId)-1; i++ {
				p.BusId[i] = int8(busID[i])
			}
			return p, nvml.SUCCESS
		}
		d.GetSerialFunc = func() (string, nvml.Return) { return "", nvml.ERROR_NOT_SUPPORTED }
		d.GetVbiosVersionFunc = func() (string, nvml.Return) { return "", nvml.ERROR_NOT_SUPPORTED }
		d.GetEccModeFunc = func() (nvml.EnableState, nvml.EnableState, nvml.Return) { return 0, 0, nvml.ERROR_NOT_SUPPORTED }
		d.GetTotalEccErrorsFunc = func(nvml.MemoryErrorType, nvml.EccCounterType) (uint64, nvml.Return) {
			return 0, nvml.ERROR_NOT_SUPPORTED
		}
		d.GetRetiredPagesPendingStatusFunc = func() (nvml.EnableState, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
		d.GetRetiredPagesFunc = func(nvml.PageRetirementCause) ([]uint64, nvml.Return) { return nil, nvml.ERROR_NOT_SUPPORTED }
		d.GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) { return 0, 0, false, false, nvml.ERROR_NOT_SUPPORTED }
		d.GetCurrPcieLinkGenerationFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
		d.GetMaxPcieLinkGenerationFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
		d.GetCurrPcieLinkWidthFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
		d.GetMaxPcieLinkWidthFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
		d.GetPcieReplayCounterFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
		d.GetNvLinkStateFunc = func(int) (nvml.EnableState, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
		d.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
		d.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
		d.GetEnforcedPowerLimitFunc = func() (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
		d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED }
		d.GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
		d.GetPersistenceModeFunc = func() (nvml.EnableState, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
		d.GetPerformanceStateFunc = func() (nvml.Pstates, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	}
}

// Healthy answers the queries as a healthy, idle datacenter GPU with links
// NVLinks would: ECC on and clean, PCIe at its maximum, all links up.
func Healthy(s *server.Server, links int, gen int) {
	NotSupported(s)
	for i, dev := range s.Devices {
		d := dev.(*server.Device)
		serial := "13200000000" + string(rune('0'+i/10)) + string(rune('0'+i%10))
		d.GetSerialFunc = func() (string, nvml.Return) { return serial, nvml.SUCCESS }
		d.GetVbiosVersionFunc = func() (string, nvml.Return) { return "96.00.74.00.01", nvml.SUCCESS }
		d.GetEccModeFunc = func() (nvml.EnableState, nvml.EnableState, nvml.Return) {
			return nvml.FEATURE_ENABLED, nvml.FEATURE_ENABLED, nvml.SUCCESS
		}
		d.GetTotalEccErrorsFunc = func(nvml.MemoryErrorType, nvml.EccCounterType) (uint64, nvml.Return) { return 0, nvml.SUCCESS }
		d.GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) { return 0, 0, false, false, nvml.SUCCESS }
		d.GetCurrPcieLinkGenerationFunc = func() (int, nvml.Return) { return gen, nvml.SUCCESS }
		d.GetMaxPcieLinkGenerationFunc = func() (int, nvml.Return) { return gen, nvml.SUCCESS }
		d.GetCurrPcieLinkWidthFunc = func() (int, nvml.Return) { return 16, nvml.SUCCESS }
		d.GetMaxPcieLinkWidthFunc = func() (int, nvml.Return) { return 16, nvml.SUCCESS }
		d.GetNvLinkStateFunc = func(link int) (nvml.EnableState, nvml.Return) {
			if link >= links {
				return 0, nvml.ERROR_INVALID_ARGUMENT
			}
			return nvml.FEATURE_ENABLED, nvml.SUCCESS
		}
		d.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 31, nvml.SUCCESS }
		d.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 69250, nvml.SUCCESS }
		d.GetEnforcedPowerLimitFunc = func() (uint32, nvml.Return) { return 700000, nvml.SUCCESS }
		d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, nvml.SUCCESS }
		d.GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) { return 0x1, nvml.SUCCESS }
		d.GetPersistenceModeFunc = func() (nvml.EnableState, nvml.Return) { return nvml.FEATURE_ENABLED, nvml.SUCCESS }
		d.GetPerformanceStateFunc = func() (nvml.Pstates, nvml.Return) { return nvml.PSTATE_0, nvml.SUCCESS }
	}
}
