package diag

import (
	"encoding/json"
	"testing"

	"sigs.k8s.io/yaml"
)

// Every key but waiver is always emitted, sources as [] when empty; waiver
// appears only when set. YAML has the same keys.
func TestFindingKeys(t *testing.T) {
	b, err := json.Marshal(Finding{Rule: "R", Severity: SeverityError, Message: "m"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"rule":"R","severity":"error","message":"m","fix":"","sources":[],"path":"","file":"","line":0,"column":0,"environment":"","gpu":""}`
	if string(b) != want {
		t.Errorf("JSON = %s\nwant   %s", b, want)
	}
	b, err = json.Marshal(Finding{Rule: "R", Sources: []string{"https://example.com"}, Waiver: "accepted risk", GPU: "0"})
	if err != nil {
		t.Fatal(err)
	}
	want = `{"rule":"R","severity":"","message":"","fix":"","sources":["https://example.com"],"path":"","file":"","line":0,"column":0,"environment":"","gpu":"0","waiver":"accepted risk"}`
	if string(b) != want {
		t.Errorf("JSON = %s\nwant   %s", b, want)
	}
	y, err := yaml.Marshal([]Finding{{Rule: "R"}})
	if err != nil {
		t.Fatal(err)
	}
	wantY := "- column: 0\n  environment: \"\"\n  file: \"\"\n  fix: \"\"\n  gpu: \"\"\n  line: 0\n  message: \"\"\n  path: \"\"\n  rule: R\n  severity: \"\"\n  sources: []\n"
	if string(y) != wantY {
		t.Errorf("YAML = %q\nwant   %q", y, wantY)
	}
	var back Finding
	if err := json.Unmarshal(b, &back); err != nil || back.Waiver != "accepted risk" || back.GPU != "0" || len(back.Sources) != 1 {
		t.Errorf("round trip: %+v, %v", back, err)
	}
}

func TestSummarizeAndCount(t *testing.T) {
	fs := []Finding{{Severity: SeverityError}, {Severity: SeverityWarning}, {Severity: SeverityWarning}, {Severity: SeverityInfo}, {Severity: ""}}
	if got, want := Summarize(fs), (Summary{Errors: 1, Warnings: 2, Infos: 2}); got != want {
		t.Errorf("Summarize = %+v, want %+v", got, want)
	}
	b, _ := json.Marshal(Summary{Errors: 1})
	if string(b) != `{"errors":1,"warnings":0,"infos":0}` {
		t.Errorf("Summary JSON = %s", b)
	}
	if Count(fs, SeverityWarning) != 2 || Count(nil, SeverityError) != 0 {
		t.Error("Count")
	}
}

func TestWorst(t *testing.T) {
	for _, tc := range []struct {
		in   []Verdict
		want Verdict
	}{
		{[]Verdict{Pass, Skipped, Inconclusive}, Inconclusive},
		{[]Verdict{Pass, Fail, Inconclusive}, Fail},
		{[]Verdict{Fail, Pass}, Fail},
		{[]Verdict{Skipped}, Inconclusive},
		{nil, Inconclusive},
		{[]Verdict{Pass, Skipped}, Pass},
		{[]Verdict{Pass, "bogus"}, Pass},
	} {
		if got := Worst(tc.in...); got != tc.want {
			t.Errorf("Worst(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
