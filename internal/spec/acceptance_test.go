package spec

import (
	"errors"
	"strings"
	"testing"
	"time"
)

const acceptanceHead = "apiVersion: gpuctl.dev/v1alpha1\nkind: ClusterSpec\nmetadata: {name: a}\nspec:\n  acceptance:\n"

const acceptanceGood = `    image: ghcr.io/gpuctl/gpuctl:v0.9.0@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
    schedule: "0 3 * * *"
    keySecret: {name: gpuctl-accept-key, key: accept.key}
    records: {configMap: true}
`

func TestAcceptanceDecodes(t *testing.T) {
	doc, err := Parse("s.yaml", []byte(acceptanceHead+acceptanceGood+"    maxUnhealthy: 3\n    stages: [inventory, cuda]\n    parallel: 4\n"))
	if err != nil {
		t.Fatal(err)
	}
	a := doc.Spec.Spec.Acceptance
	if a == nil || a.MaxUnhealthyOr() != (IntOrPercent{Value: 3}) || a.ParallelOr() != 4 || a.NamespaceOr() != DefaultAcceptanceNamespace || strings.Join(a.StagesOr(), ",") != "inventory,cuda" {
		t.Fatalf("acceptance = %+v", a)
	}
	if d, err := a.TimeoutOr(time.Minute); err != nil || d != time.Minute {
		t.Errorf("timeout unset: %v %v, want the derived 1m", d, err)
	}
	doc, err = Parse("s.yaml", []byte(acceptanceHead+acceptanceGood+"    timeout: 3h\n"))
	if err != nil {
		t.Fatal(err)
	}
	if d, err := doc.Spec.Spec.Acceptance.TimeoutOr(time.Minute); err != nil || d != 3*time.Hour {
		t.Errorf("timeout 3h: %v %v", d, err)
	}
	doc, err = Parse("s.yaml", []byte(acceptanceHead+acceptanceGood))
	if err != nil {
		t.Fatal(err)
	}
	if a := doc.Spec.Spec.Acceptance; a.MaxUnhealthyOr().String() != "10%" || a.ParallelOr() != 1 || strings.Join(a.StagesOr(), ",") != "kubernetes,inventory,topology,cuda" {
		t.Errorf("defaults = %+v", a)
	}
}

// Each bad value is refused at the line and column where it is written.
func TestAcceptanceErrorsAtPosition(t *testing.T) {
	for _, c := range []struct {
		name, body string
		line, col  int
		msg        string
	}{
		{"schedule", strings.Replace(acceptanceGood, `"0 3 * * *"`, `"0 3 * *"`, 1), 7, 5, "not a cron schedule"},
		{"schedule-tz", strings.Replace(acceptanceGood, `"0 3 * * *"`, `"TZ=UTC 0 3 * * *"`, 1), 7, 5, "time zone"},
		{"schedule-cron-tz", strings.Replace(acceptanceGood, `"0 3 * * *"`, `"CRON_TZ=Europe/Berlin 0 3 * * *"`, 1), 7, 5, "CRON_TZ="},
		{"time-zone", acceptanceGood + "    timeZone: Mars/Olympus\n", 10, 5, `unknown time zone "Mars/Olympus"`},
		{"time-zone-near", acceptanceGood + "    timeZone: Europe/Berln\n", 10, 5, `did you mean "Europe/Berlin"?`},
		{"time-zone-local", acceptanceGood + "    timeZone: Local\n", 10, 5, "controller's own"},
		{"time-zone-chars", acceptanceGood + "    timeZone: ../etc/passwd\n", 10, 5, "not an IANA time zone name"},
		{"schedule-range", strings.Replace(acceptanceGood, `"0 3 * * *"`, `"0 25 * * *"`, 1), 7, 5, "not a cron schedule"},
		{"no-tag", strings.Replace(acceptanceGood, ":v0.9.0@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "", 1), 6, 5, "neither a tag nor a digest"},
		{"bad-digest", strings.Replace(acceptanceGood, "@sha256:0123", "@sha256:XY23", 1), 6, 5, "digest"},
		{"max-unhealthy", acceptanceGood + "    maxUnhealthy: ten\n", 10, 19, "neither a number of nodes"},
		{"max-unhealthy-pct", acceptanceGood + "    maxUnhealthy: \"150%\"\n", 10, 19, "between 1% and 100%"},
		{"stage", acceptanceGood + "    stages: [inventory, cudaa]\n", 10, 25, `unknown stage "cudaa"`},
		{"image-stage", acceptanceGood + "    images: {cudaa: r.example/cuda:12}\n", 10, 14, `did you mean "cuda"?`},
		{"image-api-stage", acceptanceGood + "    images: {kubernetes: r.example/k:1}\n", 10, 14, "runs no image"},
		{"image-not-run", acceptanceGood + "    images: {dcgm: r.example/dcgm:4}\n", 10, 14, "does not run"},
		{"image-no-tag", acceptanceGood + "    stages: [inventory, cuda]\n    images:\n      cuda: r.example/cuda\n", 12, 7, "neither a tag nor a digest"},
		{"records-both", strings.Replace(acceptanceGood, "{configMap: true}", "{configMap: true, persistentVolumeClaim: {claimName: r}}", 1), 9, 5, "both"},
		{"records-neither", strings.Replace(acceptanceGood, "    records: {configMap: true}\n", "", 1), 5, 3, "records is required"},
		{"no-image", strings.Replace(acceptanceGood, "    image: ghcr.io/gpuctl/gpuctl:v0.9.0@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n", "", 1), 5, 3, "image is required"},
		{"unknown-field", acceptanceGood + "    shedule: x\n", 10, 5, `unknown field "shedule"`},
		{"preflight-pool", acceptanceGood + "    preflight: {pools: [train]}\n", 10, 25, `no node pool "train"`},
		{"timeout", acceptanceGood + "    timeout: 3 hours\n", 10, 5, `timeout "3 hours" is not a duration`},
		{"timeout-short", acceptanceGood + "    timeout: 30s\n", 10, 5, "a sweep needs at least 1m0s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("s.yaml", []byte(acceptanceHead+c.body))
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want a *spec.Error", err)
			}
			if se.Line != c.line || se.Column != c.col || !strings.Contains(se.Error(), c.msg) {
				t.Errorf("got %d:%d %q; want %d:%d containing %q", se.Line, se.Column, se.Error(), c.line, c.col, c.msg)
			}
		})
	}
}

// An overlay may change one field; the merged block is what is checked.
func TestAcceptanceOverlay(t *testing.T) {
	base := acceptanceHead + acceptanceGood + "  environments:\n    dev:\n      acceptance: {schedule: "
	if _, err := Parse("s.yaml", []byte(base+"\"@daily\"}\n")); err != nil {
		t.Errorf("overlay with a schedule only: %v", err)
	}
	_, err := Parse("s.yaml", []byte(base+"\"0 0 0 0 0 0\"}\n"))
	var se *Error
	if !errors.As(err, &se) || se.Line != 12 || !strings.Contains(se.Message, "not a cron schedule") {
		t.Errorf("bad overlay schedule: %v", err)
	}
}

func TestParseImage(t *testing.T) {
	for _, ok := range []string{"gpuctl:dev", "ghcr.io/gpuctl/gpuctl:v1", "localhost:5000/gpuctl:v1", "r.example/a/b@sha256:" + strings.Repeat("a", 64)} {
		if err := ParseImage(ok); err != nil {
			t.Errorf("ParseImage(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"gpuctl", "localhost:5000/gpuctl", "GHCR.io/x:v1", "x:", "x@sha256:abc"} {
		if err := ParseImage(bad); err == nil {
			t.Errorf("ParseImage(%q) accepted", bad)
		}
	}
}

// The zone names the did-you-mean offers are all known to time.LoadLocation
// with the embedded database, and a good zone validates.
func TestTimeZones(t *testing.T) {
	names := tzNames()
	if len(names) < 400 {
		t.Fatalf("%d zone names", len(names))
	}
	for _, n := range names {
		if err := ParseTimeZone(n); err != nil {
			t.Errorf("listed zone %s: %v", n, err)
		}
	}
	for _, ok := range []string{"Etc/UTC", "UTC", "America/New_York", "Asia/Kolkata"} {
		if err := ParseTimeZone(ok); err != nil {
			t.Errorf("ParseTimeZone(%q): %v", ok, err)
		}
	}
	if got := NearestTimeZone("america/new_york"); got != "America/New_York" {
		t.Errorf("NearestTimeZone = %q", got)
	}
	if got := NearestTimeZone("Mars/Olympus"); got != "" {
		t.Errorf("NearestTimeZone(Mars/Olympus) = %q, want none", got)
	}
}
