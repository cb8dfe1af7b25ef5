package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/cli/render"
	"github.com/gpuctl/gpuctl/internal/record"
)

// a3uRecord is accept's signed record of a GKE A3 Ultra node's kubernetes
// and network stages, with an evidence bundle (internal/accept/testdata/records).
var (
	a3uRecord  = filepath.Join("..", "accept", "testdata", "records", "a3u-network.dsse.json")
	recordsPub = filepath.Join("..", "accept", "testdata", "records", "test.pub")
)

// TestVerifyShowsRecordTemplate: verify's text and JSON show the record
// mapped onto the practice's template: the node's OS image, kernel,
// containerd and kubelet, the NICs' model and firmware, the baseline the
// port rate met and the evidence URI, each as the record holds it.
func TestVerifyShowsRecordTemplate(t *testing.T) {
	f, err := record.ReadFile(a3uRecord)
	if err != nil {
		t.Fatal(err)
	}
	p := f.Predicate
	want := []string{p.Node.OSImage + " / " + p.Node.KernelVersion, p.Node.ContainerRuntime + " / " + p.Node.Kubelet,
		"NIC firmware " + p.Network.Devices[0].Firmware, "mlx5 " + p.Network.Devices[0].Model,
		record.BaselineText(p.BaselinesMet[0]), p.EvidenceBundle.URI}
	code, out, errOut := runVerify(t, a3uRecord, "--key", recordsPub)
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	for _, w := range append([]string{"record template:", "OS / kernel:", "Result / evidence URI:"}, want...) {
		if !strings.Contains(out, w) {
			t.Errorf("verify's text lacks %q:\n%s", w, out)
		}
	}
	code, out, errOut = runVerify(t, a3uRecord, "--key", recordsPub, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	var v render.Verification
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if v.EvidenceURI != p.EvidenceBundle.URI || len(v.Template) != 15 {
		t.Fatalf("evidenceURI %q, %d template fields", v.EvidenceURI, len(v.Template))
	}
	var values strings.Builder
	for _, tf := range v.Template {
		values.WriteString(tf.Value + "\n")
	}
	for _, w := range want {
		if !strings.Contains(values.String(), w) {
			t.Errorf("verify's JSON template lacks %q:\n%s", w, values.String())
		}
	}
}

// TestSchemaRecord: `gpuctl schema record` prints the record predicate's
// schema.
func TestSchemaRecord(t *testing.T) {
	streams, _, out, errOut := TestStreams()
	if code := Run(context.Background(), []string{"schema", "record"}, streams); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want, err := record.JSONSchema()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), append(want, '\n')) {
		t.Errorf("schema record printed %d bytes, want record.JSONSchema's %d", out.Len(), len(want)+1)
	}
}

// TestVerifyNotesUnboundRecord: a record of a run without the inventory
// stage binds no GPU identities, and verify says so; a record with GPUs
// does not get the note.
func TestVerifyNotesUnboundRecord(t *testing.T) {
	const note = "binds no GPU identities"
	code, out, errOut := runVerify(t, a3uRecord, "--key", recordsPub)
	if code != 0 || !strings.Contains(out, note) {
		t.Errorf("a3u network record: exit %d, no note:\n%s%s", code, out, errOut)
	}
	code, out, errOut = runVerify(t, signedFixture, "--key", recordsPub)
	if code != 0 || strings.Contains(out, note) {
		t.Errorf("h100 record: exit %d, note on a record with GPUs:\n%s%s", code, out, errOut)
	}
}
