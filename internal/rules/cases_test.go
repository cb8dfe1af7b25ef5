package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Verdicts of the repository's testdata/cases/CASES.md: VALID = no error;
// WARN = no error and at least one warning; INVALID = at least one error.
type verdict string

const (
	valid   verdict = "VALID"
	warn    verdict = "WARN"
	invalid verdict = "INVALID"
)

// caseRow is one case of CASES.md: a spec under testdata/cases, or a Query
// for facts the spec cannot carry, or the reason it is not a validate case.
type caseRow struct {
	id      string
	file    string
	query   *Query
	asOf    time.Time // zero: 2026-11-29, the date CASES.md is pinned to
	verdict verdict
	// rule and severity: a finding the verdict rests on (VALID rows leave
	// rule empty and list rules that must not appear in absent).
	rule     string
	severity diag.Severity
	absent   []string
	na       string // why the case is not a validate case
}

var cases = []caseRow{
	// A. Driver x CUDA
	{id: "1", file: "01-driver-535-cuda-12.4.yaml", verdict: warn, rule: RuleCUDAMinorCompat, severity: diag.SeverityWarning}, // INVALID only with --strict (the CLI's)
	{id: "2", file: "02-driver-535.104.05-cuda-12.2.2.yaml", verdict: valid, absent: []string{RuleCUDAMinorCompat, RuleCUDADriverMin}},
	{id: "5", file: "05-driver-470-cuda-12.0.yaml", verdict: invalid, rule: RuleCUDADriverMin, severity: diag.SeverityError},
	{id: "6", file: "06-driver-470-cuda-11.8.yaml", verdict: warn, rule: RuleCUDAMinorCompat, severity: diag.SeverityWarning},
	{id: "9", file: "09-r570-cuda-compat-13.0-h100.yaml", verdict: warn, rule: RuleCUDAForwardCompat, severity: diag.SeverityWarning},
	{id: "9 (before R570's EOL)", file: "09-r570-cuda-compat-13.0-h100.yaml", asOf: mustDate("2026-01-15"), verdict: valid, absent: []string{RuleCUDAForwardCompat, RuleDriverEOL, RuleCUDADriverMin, RuleCUDAMinorCompat}},
	{id: "10", file: "10-cuda-12.7.yaml", verdict: invalid, rule: RuleCUDAUnknown, severity: diag.SeverityError},
	// B. GPU x driver x CUDA
	{id: "11", file: "11-v100-cuda-13.0.yaml", verdict: invalid, rule: RuleGPUArchCUDA, severity: diag.SeverityError},
	{id: "13", file: "13-v100-r580-cuda-12.9.yaml", verdict: valid, absent: []string{RuleGPUDriverBranch, RuleGPUArchCUDA, RuleCUDAMinorCompat, RuleDriverEOL}},
	{id: "14", file: "14-k80-cuda-12.2.yaml", verdict: invalid, rule: RuleGPUArchCUDA, severity: diag.SeverityError},
	{id: "15", file: "15-h100-r525-cuda-12.0.yaml", verdict: warn, rule: RuleDriverEOL, severity: diag.SeverityWarning, absent: []string{RuleGPUDriverBranch}},
	{id: "17", file: "17-b200-driver-565.yaml", verdict: invalid, rule: RuleGPUDriverBranch, severity: diag.SeverityError},
	{id: "20", file: "20-b200-cuda-12.4.yaml", verdict: warn, rule: RuleGPUArchCUDA, severity: diag.SeverityWarning},
	{id: "20 (workloadPTX)", file: "20b-b200-cuda-12.4-ptx.yaml", verdict: valid, rule: RuleGPUArchCUDA, severity: diag.SeverityInfo},
	{id: "23", file: "23-l4-mig.yaml", verdict: invalid, rule: RuleMIGUnsupported, severity: diag.SeverityError},
	{id: "24", file: "24-t4-r580-cuda-13.1.yaml", verdict: warn, rule: RuleCUDAMinorCompat, severity: diag.SeverityWarning},
	// C. EKS
	{id: "25", file: "25-eks-1.33-al2.yaml", verdict: invalid, rule: RuleEKSAMIK8s, severity: diag.SeverityError},
	{id: "28", file: "28-al2023-no-device-plugin.yaml", verdict: invalid, rule: RulePluginMissing, severity: diag.SeverityError},
	{id: "29", file: "29-bottlerocket-plus-helm-plugin.yaml", verdict: invalid, rule: RulePluginConflict, severity: diag.SeverityError},
	{id: "32", file: "32-g5g-bottlerocket-arm.yaml", verdict: valid, absent: []string{RuleEKSAMIArch, RulePluginConflict, RulePluginMissing}},
	{id: "33", file: "33-p5-efa-16.yaml", verdict: warn, rule: RuleEFAInterfaces, severity: diag.SeverityWarning},
	// D. GKE
	{id: "34", file: "34-gke-n1-a100.yaml", verdict: invalid, rule: RuleMachineAccel, severity: diag.SeverityError},
	{id: "38", file: "38-gke-default-driver-helm-plugin.yaml", verdict: invalid, rule: RulePluginConflict, severity: diag.SeverityError},
	{id: "38 (GPU Operator plugin)", file: "38b-gke-default-driver-operator-plugin.yaml", verdict: invalid, rule: RulePluginConflict, severity: diag.SeverityError},
	{id: "39", file: "39-gke-cos-operator-driver.yaml", verdict: invalid, rule: RuleOperatorCOS, severity: diag.SeverityError},
	{id: "41", file: "41-gke-1.34-operator-25.10-no-runtime-config.yaml", verdict: invalid, rule: RuleOperatorGKEKit, severity: diag.SeverityError},
	// E. GPU Operator / device plugin
	{id: "43", file: "43-operator-26.7-eks-1.32.yaml", verdict: invalid, rule: RuleOperatorK8s, severity: diag.SeverityError},
	{id: "45", query: &Query{GPU: "GH200", KernelModules: "proprietary"}, verdict: invalid, rule: RuleGPUOpenModules, severity: diag.SeverityError,
		na: "no GKE or EKS machine type carries GH200, so the rule is tested through Check (gpuctl matrix check)"},
	// F. NCCL
	{id: "47", file: "47-a3-ultra-ib-disable.yaml", verdict: warn, rule: RuleNCCLIBDisable, severity: diag.SeverityWarning},
	{id: "50", na: "an acceptance case (the nccl stage of gpuctl accept, internal/accept), not a validate case; the baseline it compares against is NCCLBaseline(\"H100-SXM-8\"), checked in TestCase50Baseline"},
}

func TestCases(t *testing.T) {
	for _, c := range cases {
		t.Run("case "+c.id, func(t *testing.T) {
			if c.file == "" && c.query == nil {
				t.Skipf("not applicable: %s", c.na)
			}
			at := asOf20261129
			if !c.asOf.IsZero() {
				at = c.asOf
			}
			var fs []diag.Finding
			if c.query != nil {
				fs = Check(*c.query, Options{AsOf: at})
			} else {
				fs = validateFile(t, filepath.Join("testdata", "cases", c.file), at)
			}
			errs, warns := 0, 0
			for _, f := range fs {
				switch f.Severity {
				case diag.SeverityError:
					errs++
				case diag.SeverityWarning:
					warns++
				}
			}
			switch c.verdict {
			case valid:
				if errs > 0 {
					t.Errorf("verdict VALID, got %d errors:\n%s", errs, dump(fs))
				}
			case warn:
				if errs > 0 || warns == 0 {
					t.Errorf("verdict WARN, got %d errors and %d warnings:\n%s", errs, warns, dump(fs))
				}
			case invalid:
				if errs == 0 {
					t.Errorf("verdict INVALID, got no error:\n%s", dump(fs))
				}
			}
			if c.rule != "" && !hasFinding(fs, c.rule, c.severity) {
				t.Errorf("want a %s %s finding, got:\n%s", c.severity, c.rule, dump(fs))
			}
			for _, r := range c.absent {
				for _, f := range fs {
					if f.Rule == r && f.Severity != diag.SeverityInfo {
						t.Errorf("unexpected %s: %s", r, f.Message)
					}
				}
			}
		})
	}
}

// TestCasesCoverCASESmd holds the table to the case list in the repository's
// testdata: every case number in CASES.md has a row.
func TestCasesCoverCASESmd(t *testing.T) {
	b, err := os.ReadFile("../../testdata/cases/CASES.md")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, c := range cases {
		have[strings.Fields(c.id)[0]] = true
	}
	for _, line := range strings.Split(string(b), "\n") {
		num, rest, ok := strings.Cut(line, ". ")
		if !ok || num == "" || strings.Trim(num, "0123456789") != "" || !strings.HasPrefix(rest, "`") && !strings.HasPrefix(rest, "(") {
			continue
		}
		if !have[num] {
			t.Errorf("case %s of CASES.md has no row in the case table", num)
		}
	}
}

// TestCase50Baseline: case 50's 250 GB/s on 8x H100 SXM fails the baseline
// the acceptance stage uses, and the baseline names its source.
func TestCase50Baseline(t *testing.T) {
	b, ok := matrix.NCCLBaseline("H100-SXM-8")
	if !ok || !(250 < b.AcceptanceMinBusBandwidthGBps) || len(b.Sources) == 0 {
		t.Fatalf("baseline = %+v, %v", b, ok)
	}
}

func validateFile(t *testing.T, path string, at time.Time) []diag.Finding {
	t.Helper()
	doc, err := spec.Load(path, nil)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	cs, err := doc.Resolve("")
	if err != nil {
		t.Fatal(err)
	}
	return Validate(cs, Options{AsOf: at})
}

func hasFinding(fs []diag.Finding, rule string, sev diag.Severity) bool {
	for _, f := range fs {
		if f.Rule == rule && (sev == "" || f.Severity == sev) {
			return true
		}
	}
	return false
}

func dump(fs []diag.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString("  " + string(f.Severity) + " " + f.Rule + " " + f.Path + ": " + f.Message + "\n")
	}
	return b.String()
}
