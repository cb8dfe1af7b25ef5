package probe

import (
	"regexp"
	"strconv"
	"strings"
)

// CUDAReport is the output of a CUDA sample: deviceQuery (what the CUDA
// runtime sees) or vectorAdd (a kernel runs and computes the right answer).
// Both come from github.com/NVIDIA/cuda-samples.
type CUDAReport struct {
	Header
	// Program is "deviceQuery" or "vectorAdd".
	Program string `json:"program"`
	// Devices is the device count the sample reports; nil when not printed.
	Devices *int `json:"devices"`
	// DriverVersion and RuntimeVersion are CUDA API versions ("12.5"), not
	// the kernel driver's version.
	DriverVersion  string `json:"driverVersion"`
	RuntimeVersion string `json:"runtimeVersion"`
	// Result is "PASS" or "FAIL" ("" when the output has no verdict line).
	Result     string           `json:"result"`
	DeviceInfo []CUDADevice     `json:"deviceInfo"`
	PeerAccess []CUDAPeerAccess `json:"peerAccess"`
	// Error is the CUDA error the sample reported, ErrorCode its number
	// where printed (cudaError_t).
	Error     string `json:"error"`
	ErrorCode *int   `json:"errorCode"`
}

// CUDADevice is one "Device N" block of deviceQuery.
type CUDADevice struct {
	Index             int    `json:"index"`
	Name              string `json:"name"`
	ComputeCapability string `json:"computeCapability"`
	// TotalMemoryMiB is deviceQuery's "MBytes" (2^20 bytes).
	TotalMemoryMiB   *int64 `json:"totalMemoryMiB"`
	TotalMemoryBytes *int64 `json:"totalMemoryBytes"`
	Multiprocessors  *int   `json:"multiprocessors"`
	CUDACoresPerMP   *int   `json:"cudaCoresPerMP"`
	CUDACores        *int   `json:"cudaCores"`
	ECCEnabled       *bool  `json:"eccEnabled"`
	// PCI location in decimal, as deviceQuery prints it.
	PCIDomain *int `json:"pciDomain"`
	PCIBus    *int `json:"pciBus"`
	PCIDevice *int `json:"pciDevice"`
}

// CUDAPeerAccess is one "> Peer access from A (GPUi) -> B (GPUj) : Yes" line.
type CUDAPeerAccess struct {
	From      int  `json:"from"`
	To        int  `json:"to"`
	Supported bool `json:"supported"`
}

var (
	reCUDADetected  = regexp.MustCompile(`Detected (\d+) CUDA Capable device`)
	reCUDADevice    = regexp.MustCompile(`^Device (\d+): "(.*)"`)
	reCUDAVersions  = regexp.MustCompile(`CUDA Driver Version / Runtime Version\s+(\S+)\s*/\s*(\S+)`)
	reCUDACap       = regexp.MustCompile(`CUDA Capability Major/Minor version number:\s+(\S+)`)
	reCUDAMem       = regexp.MustCompile(`Total amount of global memory:\s+(\d+) MBytes \((\d+) bytes\)`)
	reCUDASM        = regexp.MustCompile(`\((\d+)\) Multiprocessors, \((\d+)\) CUDA Cores/MP:\s+(\d+) CUDA Cores`)
	reCUDAECC       = regexp.MustCompile(`Device has ECC support:\s+(\S+)`)
	reCUDAPCI       = regexp.MustCompile(`Device PCI Domain ID / Bus ID / location ID:\s+(\d+) / (\d+) / (\d+)`)
	reCUDAPeer      = regexp.MustCompile(`> Peer access from .* \(GPU(\d+)\) -> .* \(GPU(\d+)\) : (Yes|No)`)
	reCUDASummary   = regexp.MustCompile(`CUDA Driver Version = ([^,]+), CUDA Runtime Version = ([^,]+), NumDevs = (\d+)`)
	reCUDAResult    = regexp.MustCompile(`^Result = (PASS|FAIL)`)
	reCUDAReturned  = regexp.MustCompile(`cudaGetDeviceCount returned (\d+)`)
	reCUDAArrow     = regexp.MustCompile(`^-> (.+)$`)
	reCUDAErrorCode = regexp.MustCompile(`\(error code (.+?)\)`)
)

// ParseCUDA reads deviceQuery or vectorAdd output.
func ParseCUDA(data []byte) *CUDAReport {
	r := &CUDAReport{}
	j := newJudge(&r.Header, KindCUDA)
	var cur *CUDADevice
	detected := -1
	verificationFailed := ""
	for _, raw := range lines(data) {
		l := strings.TrimSpace(raw)
		switch {
		case strings.Contains(l, "deviceQuery Starting") || strings.Contains(l, "CUDA Device Query"):
			r.Program = "deviceQuery"
		case strings.HasPrefix(l, "[Vector addition of"):
			r.Program = "vectorAdd"
		}
		if !cudaInteresting(l) {
			continue
		}
		if m := reCUDADetected.FindStringSubmatch(l); m != nil {
			detected, _ = strconv.Atoi(m[1])
			r.Devices = ptr(detected)
			continue
		}
		if m := reCUDADevice.FindStringSubmatch(l); m != nil && j.room(len(r.DeviceInfo), "devices") {
			idx, _ := strconv.Atoi(m[1])
			r.DeviceInfo = append(r.DeviceInfo, CUDADevice{Index: idx, Name: m[2]})
			cur = &r.DeviceInfo[len(r.DeviceInfo)-1]
			continue
		}
		if m := reCUDAVersions.FindStringSubmatch(l); m != nil {
			r.DriverVersion, r.RuntimeVersion = m[1], m[2]
			continue
		}
		if m := reCUDAPeer.FindStringSubmatch(l); m != nil && j.room(len(r.PeerAccess), "peer access lines") {
			from, _ := strconv.Atoi(m[1])
			to, _ := strconv.Atoi(m[2])
			r.PeerAccess = append(r.PeerAccess, CUDAPeerAccess{From: from, To: to, Supported: m[3] == "Yes"})
			continue
		}
		if m := reCUDASummary.FindStringSubmatch(l); m != nil {
			r.DriverVersion, r.RuntimeVersion = strings.TrimSpace(m[1]), strings.TrimSpace(m[2])
			if n := parseIntPtr(m[3]); n != nil {
				r.Devices = n
			}
			continue
		}
		if m := reCUDAResult.FindStringSubmatch(l); m != nil {
			r.Result = m[1]
			continue
		}
		if m := reCUDAReturned.FindStringSubmatch(l); m != nil {
			r.ErrorCode = parseIntPtr(m[1])
			continue
		}
		if m := reCUDAArrow.FindStringSubmatch(l); m != nil && r.ErrorCode != nil && r.Error == "" {
			r.Error = m[1]
			continue
		}
		switch {
		case l == "Test PASSED":
			r.Result = "PASS"
			continue
		case strings.HasPrefix(l, "Result verification failed"):
			r.Result, verificationFailed = "FAIL", l
			continue
		case strings.HasPrefix(l, "Failed to ") || strings.HasPrefix(l, "CUDA error") || strings.Contains(l, "code=") && strings.Contains(l, "cuda"):
			r.Result = "FAIL"
			if m := reCUDAErrorCode.FindStringSubmatch(l); m != nil {
				r.Error = m[1]
			} else {
				r.Error = l
			}
			continue
		}
		if cur == nil {
			continue
		}
		if m := reCUDACap.FindStringSubmatch(l); m != nil {
			cur.ComputeCapability = m[1]
		} else if m := reCUDAMem.FindStringSubmatch(l); m != nil {
			cur.TotalMemoryMiB, cur.TotalMemoryBytes = parseInt64Ptr(m[1]), parseInt64Ptr(m[2])
		} else if m := reCUDASM.FindStringSubmatch(l); m != nil {
			cur.Multiprocessors, cur.CUDACoresPerMP, cur.CUDACores = parseIntPtr(m[1]), parseIntPtr(m[2]), parseIntPtr(m[3])
		} else if m := reCUDAECC.FindStringSubmatch(l); m != nil {
			cur.ECCEnabled = parseYesNo(m[1])
		} else if m := reCUDAPCI.FindStringSubmatch(l); m != nil {
			cur.PCIDomain, cur.PCIBus, cur.PCIDevice = parseIntPtr(m[1]), parseIntPtr(m[2]), parseIntPtr(m[3])
		}
	}
	judgeCUDA(r, j, detected, verificationFailed)
	j.done()
	fillNil(r)
	return r
}

func judgeCUDA(r *CUDAReport, j *judge, detected int, verificationFailed string) {
	if r.Program == "" && r.Result == "" {
		j.unusable("not-cuda-sample", "", "the input is not deviceQuery or vectorAdd output")
		return
	}
	if verificationFailed != "" {
		j.fail("cuda-wrong-results", "", "the kernel computed wrong values: %s", verificationFailed)
	}
	if r.Error != "" {
		judgeCUDAError(j, r.Error)
	}
	switch {
	case r.Result == "":
		j.unusable("output-truncated", "", "the output ends before the sample's verdict (Result = / Test PASSED)")
	case r.Result == "FAIL" && r.Error == "" && verificationFailed == "":
		j.fail("cuda-sample-failed", "", "%s reported FAIL", r.Program)
	}
	if r.Program == "deviceQuery" && r.Result == "PASS" {
		if detected >= 0 && detected != len(r.DeviceInfo) {
			j.unusable("output-truncated", "", "deviceQuery detected %d devices but the output describes %d", detected, len(r.DeviceInfo))
		}
		if r.Devices != nil && detected >= 0 && *r.Devices != detected {
			j.unusable("output-garbled", "", "NumDevs = %d contradicts %d detected devices", *r.Devices, detected)
		}
		for _, d := range r.DeviceInfo {
			if d.ECCEnabled != nil && !*d.ECCEnabled {
				j.info("cuda-ecc-disabled", strconv.Itoa(d.Index), "ECC is disabled on device %d (%s)", d.Index, d.Name)
			}
		}
		no := 0
		for _, p := range r.PeerAccess {
			if !p.Supported {
				no++
			}
		}
		if no > 0 {
			j.info("cuda-no-peer-access", "", "%d of %d GPU pairs have no peer access (normal without NVLink or a P2P-capable PCIe switch)", no, len(r.PeerAccess))
		}
	}
}

// judgeCUDAError classifies a CUDA runtime error (cudaError_t, CUDA Runtime
// API reference). Errors of the driver's or GPU's state fail the node;
// errors of the container or of other tenants are the environment's.
func judgeCUDAError(j *judge, e string) {
	low := strings.ToLower(e)
	switch {
	case strings.Contains(low, "driver version is insufficient"), strings.Contains(low, "forward compatibility"), strings.Contains(low, "busy or unavailable"), strings.Contains(low, "out of memory"), strings.Contains(low, "not permitted"):
		j.unusable("cuda-environment-error", "", "the sample's environment could not use the GPU (container runtime, image or other tenants), which says nothing about the GPU: %s", e)
	case strings.Contains(low, "no cuda-capable device"):
		j.fail("cuda-no-device", "", "the CUDA runtime sees no GPU: %s", e)
	case strings.Contains(low, "system not yet initialized"):
		j.fail("cuda-init-failed", "", "CUDA is not initialised on the node (on NVSwitch systems, is nvidia-fabricmanager running?): %s", e)
	case strings.Contains(low, "ecc"), strings.Contains(low, "unknown error"), strings.Contains(low, "initialization error"), strings.Contains(low, "launch failure"), strings.Contains(low, "illegal"), strings.Contains(low, "hardware"):
		j.fail("cuda-error", "", "a CUDA error of the driver or GPU: %s", e)
	default:
		j.unusable("cuda-error-unclassified", "", "the sample failed with %q, which gpuctl does not classify", e)
	}
}

// cudaMarkers prefilter the lines ParseCUDA reads with its expressions.
var cudaMarkers = []string{"Detected", "Device", "CUDA", "Peer access", "Result", "cuda", "-> ", "Multiprocessors", "memory", "Test PASSED", "Failed to "}

func cudaInteresting(l string) bool {
	for _, m := range cudaMarkers {
		if strings.Contains(l, m) {
			return true
		}
	}
	return false
}
