package probe

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// A pasted output is judged like the output itself: ANSI colours, the
// timestamps of `kubectl logs --timestamps` (and of CRI log files), a
// Markdown code fence and common indentation used to turn a failing node's
// output into "unknown" (or an unrecognised kind).
func TestPastedOutputIsJudgedLikeTheOutput(t *testing.T) {
	wraps := map[string]func(string) string{
		"ansi": func(s string) string {
			return eachLine(s, func(i int, l string) string { return "\x1b[1;32m" + l + "\x1b[0m" })
		},
		"kubectl-timestamps": func(s string) string {
			return eachLine(s, func(i int, l string) string {
				return fmt.Sprintf("2026-01-01T00:00:%02d.123456789Z %s", i%60, l)
			})
		},
		"cri-log": func(s string) string {
			return eachLine(s, func(i int, l string) string {
				if len(l) > 20 { // a partial line, as the kubelet splits long ones
					return "2026-01-01T00:00:00.1+08:00 stdout P " + l[:7] + "\n2026-01-01T00:00:00.2+08:00 stdout F " + l[7:]
				}
				return "2026-01-01T00:00:00.1+08:00 stdout F " + l
			})
		},
		"fence":  func(s string) string { return "```console\n" + s + "```\n" },
		"indent": func(s string) string { return eachLine(s, func(i int, l string) string { return "    " + l }) },
		"crlf":   func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") },
		"all": func(s string) string {
			s = eachLine(s, func(i int, l string) string { return "\x1b[33m" + l + "\x1b[m" })
			s = eachLine(s, func(i int, l string) string { return "2026-01-01T00:00:00Z " + l })
			return "\n```\n" + s + "```\n"
		},
	}
	for _, file := range []string{
		"nvidia-smi/a10-x1-q-535.129.03.txt",
		"nvidia-smi/h100-80gb-hbm3-x8-summary-table-550.90.07.txt",
		"nvidia-smi/v100-sxm3-32gb-x16-query-gpu-csv-nounits.txt",
		"nccl-tests/v100-sxm3-dgx2-x12-allgather-error-col-4-FAILED.txt",
		"dcgm/h100-x8-diag-r3-cuinit-fail-dcgm3.3.8-driver560.txt",
		"dcgm/nvvs-json-dcgm3.1.0-x8-pass-warning-prefix-nulls.txt",
		"topo/2gpu-nv2-bridge-matrix-only.txt",
		"cuda-samples/deviceQuery-l4-x1.txt",
		"failures/dmesg-T-xid119-gsp-rpc-timeout-h100.log",
	} {
		data := readString(t, file)
		want, err := Parse(KindAuto, []byte(data))
		if err != nil {
			t.Fatal(file, err)
		}
		for name, wrap := range wraps {
			got, err := Parse(KindAuto, []byte(wrap(data)))
			if err != nil {
				t.Errorf("%s, %s: %v", file, name, err)
				continue
			}
			if got.Common().Kind != want.Common().Kind || got.Common().Verdict != want.Common().Verdict {
				t.Errorf("%s, %s: %s %s, want %s %s; findings %v", file, name, got.Common().Kind, got.Common().Verdict,
					want.Common().Kind, want.Common().Verdict, rules(got.Common()))
			}
			// The named kind reads it as well.
			if got, err := Parse(want.Common().Kind, []byte(wrap(data))); err != nil || got.Common().Verdict != want.Common().Verdict {
				t.Errorf("%s, %s as %s: %v %v", file, name, want.Common().Kind, got, err)
			}
		}
	}
}

// A component log is recognised by its own timestamps, which stay.
func TestComponentLogKeepsItsTimestamps(t *testing.T) {
	k, err := Detect(readFile(t, source("k8s/operator-validator-driver-validation-chroot-nvidia-smi-missing.txt")))
	eq(t, "kind", k, KindComponentLog)
	eq(t, "err", err, nil)
}

// Unwrapping removes decoration only: a truncated output stays truncated.
func TestPastedTruncatedOutputIsNotOK(t *testing.T) {
	data := readString(t, "nvidia-smi/h100-80gb-hbm3-x8-q-535.161.08.txt")
	cut := "```\n" + eachLine(data[:len(data)/2], func(i int, l string) string { return "2026-01-01T00:00:00Z \x1b[1m" + l })
	r, err := Parse(KindAuto, []byte(cut))
	if err != nil {
		t.Fatal(err)
	}
	if v := r.Common().Verdict; v == diag.ReportOK {
		t.Errorf("verdict %s; findings %v", v, rules(r.Common()))
	}
	if r, err := Parse(KindAuto, []byte("```\n```\n")); err == nil {
		t.Errorf("an empty fence was read as %s", r.Common().Kind)
	}
}

func eachLine(s string, f func(int, string) string) string {
	ls := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range ls {
		ls[i] = f(i, l)
	}
	return strings.Join(ls, "\n") + "\n"
}
