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
	cr := cudaReader{r: r, j: j, detected: -1}
	for _, raw := range lines(data) {
		cr.line(strings.TrimSpace(raw))
	}
	judgeCUDA(r, j, cr.detected, cr.verificationFailed)
	j.done()
	fillNil(r)
	return r
}

// cudaReader reads a CUDA sample's output line by line: the program's
// banner, the report-wide lines (device count, versions, peer access, the
// verdict, errors) and the lines of the current "Device N" block.
type cudaReader struct {
	r   *CUDAReport
	j   *judge
	cur *CUDADevice
	// detected is deviceQuery's "Detected N CUDA Capable device(s)", -1
	// before it.
	detected int
	// verificationFailed is vectorAdd's "Result verification failed" line.
	verificationFailed string
}

// cudaLineRule is a report-wide kind of line: its pattern and its reader,
// which returns false to leave a matched line to the rules after it.
type cudaLineRule struct {
	re   *regexp.Regexp
	read func(cr *cudaReader, m []string) bool
}

// cudaLineRules are tried in order on every line the prefilter keeps.
var cudaLineRules = []cudaLineRule{
	{reCUDADetected, (*cudaReader).detectedDevices},
	{reCUDADevice, (*cudaReader).device},
	{reCUDAVersions, (*cudaReader).versions},
	{reCUDAPeer, (*cudaReader).peerAccess},
	{reCUDASummary, (*cudaReader).summary},
	{reCUDAResult, (*cudaReader).result},
	{reCUDAReturned, (*cudaReader).returned},
	{reCUDAArrow, (*cudaReader).arrow},
}

func (cr *cudaReader) line(l string) {
	switch {
	case strings.Contains(l, "deviceQuery Starting") || strings.Contains(l, "CUDA Device Query"):
		cr.r.Program = "deviceQuery"
	case strings.HasPrefix(l, "[Vector addition of"):
		cr.r.Program = "vectorAdd"
	}
	if !cudaInteresting(l) {
		return
	}
	for _, rule := range cudaLineRules {
		if m := rule.re.FindStringSubmatch(l); m != nil && rule.read(cr, m) {
			return
		}
	}
	if cr.verdict(l) || cr.cur == nil {
		return
	}
	cudaDeviceLine(cr.cur, l)
}

func (cr *cudaReader) detectedDevices(m []string) bool {
	cr.detected, _ = strconv.Atoi(m[1])
	cr.r.Devices = ptr(cr.detected)
	return true
}

// device opens a "Device N" block.
func (cr *cudaReader) device(m []string) bool {
	if !cr.j.room(len(cr.r.DeviceInfo), "devices") {
		return false
	}
	idx, _ := strconv.Atoi(m[1])
	cr.r.DeviceInfo = append(cr.r.DeviceInfo, CUDADevice{Index: idx, Name: m[2]})
	cr.cur = &cr.r.DeviceInfo[len(cr.r.DeviceInfo)-1]
	return true
}

func (cr *cudaReader) versions(m []string) bool {
	cr.r.DriverVersion, cr.r.RuntimeVersion = m[1], m[2]
	return true
}

func (cr *cudaReader) peerAccess(m []string) bool {
	if !cr.j.room(len(cr.r.PeerAccess), "peer access lines") {
		return false
	}
	from, _ := strconv.Atoi(m[1])
	to, _ := strconv.Atoi(m[2])
	cr.r.PeerAccess = append(cr.r.PeerAccess, CUDAPeerAccess{From: from, To: to, Supported: m[3] == "Yes"})
	return true
}

// summary reads deviceQuery's last line ("deviceQuery, CUDA Driver =
// CUDART, CUDA Driver Version = ..., NumDevs = N").
func (cr *cudaReader) summary(m []string) bool {
	cr.r.DriverVersion, cr.r.RuntimeVersion = strings.TrimSpace(m[1]), strings.TrimSpace(m[2])
	if n := parseIntPtr(m[3]); n != nil {
		cr.r.Devices = n
	}
	return true
}

func (cr *cudaReader) result(m []string) bool {
	cr.r.Result = m[1]
	return true
}

// returned reads "cudaGetDeviceCount returned N"; the "-> text" line after
// it names the error.
func (cr *cudaReader) returned(m []string) bool {
	cr.r.ErrorCode = parseIntPtr(m[1])
	return true
}

func (cr *cudaReader) arrow(m []string) bool {
	if cr.r.ErrorCode == nil || cr.r.Error != "" {
		return false
	}
	cr.r.Error = m[1]
	return true
}

// verdict reads vectorAdd's verdict lines and the samples' failure lines.
func (cr *cudaReader) verdict(l string) bool {
	r := cr.r
	switch {
	case l == "Test PASSED":
		r.Result = "PASS"
	case strings.HasPrefix(l, "Result verification failed"):
		r.Result, cr.verificationFailed = "FAIL", l
	case strings.HasPrefix(l, "Failed to ") || strings.HasPrefix(l, "CUDA error") || strings.Contains(l, "code=") && strings.Contains(l, "cuda"):
		r.Result = "FAIL"
		r.Error = l
		if m := reCUDAErrorCode.FindStringSubmatch(l); m != nil {
			r.Error = m[1]
		}
	default:
		return false
	}
	return true
}

// cudaDeviceLine reads a line of a "Device N" block into d.
func cudaDeviceLine(d *CUDADevice, l string) {
	if m := reCUDACap.FindStringSubmatch(l); m != nil {
		d.ComputeCapability = m[1]
	} else if m := reCUDAMem.FindStringSubmatch(l); m != nil {
		d.TotalMemoryMiB, d.TotalMemoryBytes = parseInt64Ptr(m[1]), parseInt64Ptr(m[2])
	} else if m := reCUDASM.FindStringSubmatch(l); m != nil {
		d.Multiprocessors, d.CUDACoresPerMP, d.CUDACores = parseIntPtr(m[1]), parseIntPtr(m[2]), parseIntPtr(m[3])
	} else if m := reCUDAECC.FindStringSubmatch(l); m != nil {
		d.ECCEnabled = parseYesNo(m[1])
	} else if m := reCUDAPCI.FindStringSubmatch(l); m != nil {
		d.PCIDomain, d.PCIBus, d.PCIDevice = parseIntPtr(m[1]), parseIntPtr(m[2]), parseIntPtr(m[3])
	}
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
		judgeDeviceQuery(r, j, detected)
	}
}

// judgeDeviceQuery judges a passing deviceQuery: its device blocks against
// its device counts, ECC and peer access.
func judgeDeviceQuery(r *CUDAReport, j *judge, detected int) {
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

// judgeCUDAError classifies a CUDA runtime error (cudaError_t, CUDA Runtime
// API reference). Errors of the driver's or GPU's state fail the node, and
// so do the two errors that say the CUDA runtime cannot use the node's
// driver at all (judgeCUDADriverUnusable); errors of other tenants or of
// the container's limits are the environment's.
func judgeCUDAError(j *judge, e string) {
	low := strings.ToLower(e)
	if judgeCUDADriverUnusable(j, low, e) {
		return
	}
	switch {
	case strings.Contains(low, "busy or unavailable"), strings.Contains(low, "out of memory"), strings.Contains(low, "not permitted"):
		j.unusable("cuda-environment-error", "", "the sample's environment could not use the GPU (other tenants, the container's limits or permissions), which says nothing about the GPU: %s", e)
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

// judgeCUDADriverUnusable fails a sample whose CUDA runtime cannot use the
// node's driver: cudaErrorInsufficientDriver (35, "CUDA driver version is
// insufficient for CUDA runtime version": the driver is older than the
// runtime, or the container has no driver library at all) and
// cudaErrorCompatNotSupportedOnDevice (804, "forward compatibility was
// attempted on non supported HW": the cuda-compat package is in use on a GPU
// that forward compatibility does not support). Sources (checked
// 2026-12-03): https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html,
// https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html.
// The rule: CUDA does not run on the node as deployed, and the GPU
// Operator's cuda validator, which runs this very sample, fails and keeps
// the node's GPUs from workloads (NVIDIA/gpu-operator#1947, #277), so the
// output shows a node problem; the GPU itself is not implicated, as the
// finding says. It reports whether e was one of them.
func judgeCUDADriverUnusable(j *judge, low, e string) bool {
	switch {
	case strings.Contains(low, "driver version is insufficient"):
		j.fail("cuda-driver-insufficient", "", "the CUDA runtime cannot use the node's driver: it is older than the runtime, or the container has no driver library (NVIDIA runtime class or toolkit missing); CUDA does not run here, the GPU itself is not implicated: %s", e)
	case strings.Contains(low, "forward compatibility"):
		j.fail("cuda-forward-compat-unsupported", "", "CUDA forward compatibility (the cuda-compat package) is in use on a GPU that does not support it; CUDA does not run here, the GPU itself is not implicated: %s", e)
	default:
		return false
	}
	return true
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
