package probe

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// frameworkOK is the real CPU run's output (testdata/framework, see its
// .source note), the cases below change it.
func frameworkOK(t *testing.T) string {
	t.Helper()
	return string(readFile(t, "testdata/framework/cpu-gloo-2ranks-torch-1.13-ok.log"))
}

func TestParseFrameworkCases(t *testing.T) {
	for _, tc := range []struct {
		name    string
		edit    func(string) string
		verdict diag.ReportVerdict
		rule    string
		message string
	}{
		{"real output", func(s string) string { return s }, diag.ReportOK, "", ""},
		{"no torchrun tee prefix", func(s string) string { return strings.ReplaceAll(s, "[default0]:", "") }, diag.ReportOK, "", ""},
		{"stderr run into the summary line", func(s string) string {
			return strings.Replace(s, `"world": 2}`, `"world": 2}WARNING:__main__:`, 1)
		}, diag.ReportOK, "", ""},
		{"unknown format version", func(s string) string {
			return strings.Replace(s, `"gpuctl-framework/v1"`, `"gpuctl-framework/v2"`, 1)
		}, diag.ReportUnknown, "framework-format-unknown", `"gpuctl-framework/v2"`},
		{"a line cut in the middle", func(s string) string {
			i := strings.Index(s, `"check": "all-reduce"`)
			j := i + strings.Index(s[i:], "\n")
			return s[:i+40] + s[j:]
		}, diag.ReportUnknown, "output-garbled", "not JSON"},
		{"loss not falling", func(s string) string {
			return editCheck(t, s, "training", `{"ok": false, "values": {"initialLoss": 0.46, "finalLoss": 0.45, "lossRatio": 0.978, "steps": 200}}`, true)
		}, diag.ReportFail, "framework-training-failed", "lossRatio 0.978 (threshold 0.1), initialLoss 0.46, finalLoss 0.45, steps 200"},
		{"NaN loss", func(s string) string {
			return editCheck(t, s, "training", `{"ok": false, "values": {"initialLoss": 0.46, "finalLoss": "nan", "lossRatio": "nan"}}`, true)
		}, diag.ReportFail, "framework-training-failed", "lossRatio nan (threshold 0.1)"},
		{"a CUDA error in a check", func(s string) string {
			return editCheck(t, s, "training", `{"ok": false, "values": {}, "error": {"class": "RuntimeError", "message": "CUDA error: uncorrectable ECC error encountered"}}`, true)
		}, diag.ReportFail, "framework-training-failed", "RuntimeError: CUDA error: uncorrectable ECC error encountered"},
		{"an API the image's torch lacks", func(s string) string {
			return editCheck(t, s, "training", `{"ok": false, "values": {}, "error": {"class": "AttributeError", "message": "module 'torch' has no attribute 'x'"}}`, true)
		}, diag.ReportUnknown, "framework-check-error", "AttributeError"},
		{"summary contradicts a failed check", func(s string) string {
			return editCheck(t, s, "training", `{"ok": false, "values": {"lossRatio": 0.9}}`, false)
		}, diag.ReportFail, "output-garbled", "contradicts"},
		{"no summary", func(s string) string { return s[:strings.LastIndex(s, "[default0]:")] }, diag.ReportUnknown, "output-truncated", "5 checks read"},
		{"no framework line", func(string) string {
			return "Traceback (most recent call last):\nModuleNotFoundError: No module named 'torch'\n"
		}, diag.ReportUnknown, "not-framework-output", ""},
		{"setup failed", func(string) string {
			return `GPUCTL-FRAMEWORK {"check": "init", "durationMs": 0.0, "error": {"class": "RuntimeError", "message": "CUDA is not available to torch"}, "formatVersion": "gpuctl-framework/v1", "ok": false, "ranks": [], "record": "check", "thresholds": {}, "values": {}}
GPUCTL-FRAMEWORK {"checks": ["init"], "cuda": "12.2", "durationMs": 3.1, "failed": ["init"], "formatVersion": "gpuctl-framework/v1", "ok": false, "record": "summary", "torch": "2.1.0a0+32f93b1"}
`
		}, diag.ReportFail, "framework-init-failed", "before any check (setup): RuntimeError: CUDA is not available"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ParseFramework([]byte(tc.edit(frameworkOK(t))))
			if r.Verdict != tc.verdict {
				t.Fatalf("verdict %s, want %s; findings:\n%s", r.Verdict, tc.verdict, dumpFindings(&r.Header))
			}
			if tc.rule != "" && !hasRule(&r.Header, tc.rule) {
				t.Fatalf("no %s finding:\n%s", tc.rule, dumpFindings(&r.Header))
			}
			if tc.message != "" && !strings.Contains(dumpFindings(&r.Header), tc.message) {
				t.Errorf("findings do not say %q:\n%s", tc.message, dumpFindings(&r.Header))
			}
			if tc.verdict == diag.ReportOK && len(r.Findings) != 0 {
				t.Errorf("findings on an ok output:\n%s", dumpFindings(&r.Header))
			}
			checkJSONContract(t, r)
		})
	}
}

// editCheck sets the fields of patch (a JSON object) on check name's line
// of out; with summary, the summary line says the check failed too.
func editCheck(t *testing.T, out, name, patch string, summary bool) string {
	t.Helper()
	var p map[string]any
	if err := json.Unmarshal([]byte(patch), &p); err != nil {
		t.Fatal(err)
	}
	ls := strings.Split(out, "\n")
	for i, l := range ls {
		at := strings.Index(l, FrameworkLinePrefix)
		if at < 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l[at+len(FrameworkLinePrefix):]), &m); err != nil {
			t.Fatal(err)
		}
		switch {
		case m["check"] == name:
			for k, v := range p {
				m[k] = v
			}
		case m["record"] == "summary" && summary:
			m["ok"], m["failed"] = false, []string{name}
		default:
			continue
		}
		b, _ := json.Marshal(m)
		ls[i] = l[:at] + FrameworkLinePrefix + string(b)
	}
	return strings.Join(ls, "\n")
}

// TestFrameworkNumbersRechecked: a run that says ok is held to its numbers
// and to having every check: an edited matmul error or loss ratio is FAIL,
// a summary without the other checks is unknown.
func TestFrameworkNumbersRechecked(t *testing.T) {
	ok := frameworkOK(t)
	bad := strings.NewReplacer(`"maxRelErr": 5.340538994559793e-07`, `"maxRelErr": 0.9`, `"maxRelErr": 5.797368021782091e-07`, `"maxRelErr": 0.9`).Replace(ok)
	if bad == ok {
		t.Fatal("the fixture's matmul error was not found")
	}
	if r := ParseFramework([]byte(bad)); r.Verdict != diag.ReportFail || !strings.Contains(dumpFindings(r.Common()), "max relative error 0.9 is not <= 0.0001") {
		t.Errorf("edited matmul: %s\n%s", r.Verdict, dumpFindings(r.Common()))
	}
	var keep []string
	for _, l := range strings.Split(ok, "\n") {
		if !strings.Contains(l, `"check": "training"`) && !strings.Contains(l, `"check": "checkpoint"`) {
			keep = append(keep, l)
		}
	}
	only := strings.ReplaceAll(strings.Join(keep, "\n"), `"checks": ["matmul", "all-reduce", "training", "checkpoint", "inference"]`, `"checks": ["matmul", "all-reduce", "inference"]`)
	if r := ParseFramework([]byte(only)); r.Verdict != diag.ReportUnknown || !strings.Contains(dumpFindings(r.Common()), "no training check") {
		t.Errorf("three checks: %s\n%s", r.Verdict, dumpFindings(r.Common()))
	}
}
