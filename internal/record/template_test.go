package record

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/xeipuuv/gojsonschema"
)

var update = flag.Bool("update", false, "rewrite testdata/predicate.schema.json")

// acceptRecords are accept's signed record fixtures and statements
// (internal/accept/testdata), records as accept writes them.
var acceptRecords = []string{
	"records/h100-pass.dsse.json", "records/h100-nccl-fail.dsse.json", "records/l4-network-framework.dsse.json",
	"records/a3u-network.dsse.json", "statement-healthy.json", "statement-run.json",
}

func readAccept(t *testing.T, name string) *File {
	t.Helper()
	f, err := ReadFile(filepath.Join("..", "accept", "testdata", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestJSONSchemaGolden holds `gpuctl schema record`'s output to
// testdata/predicate.schema.json, so that a renamed or dropped key shows
// in review (-update rewrites it).
func TestJSONSchemaGolden(t *testing.T) {
	got, err := JSONSchema()
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden := filepath.Join("testdata", "predicate.schema.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("schema changed (go test ./internal/record -run TestJSONSchemaGolden -update) (-want +got):\n%s", d)
	}
}

// TestRecordsMatchSchema: every predicate accept's fixtures hold, old and
// new, validates against the schema, and the schema names each new key
// of the record template.
func TestRecordsMatchSchema(t *testing.T) {
	raw, err := JSONSchema()
	if err != nil {
		t.Fatal(err)
	}
	loader := gojsonschema.NewSchemaLoader()
	loader.Draft, loader.AutoDetect = gojsonschema.Draft7, false
	schema, err := loader.Compile(gojsonschema.NewBytesLoader(raw))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range acceptRecords {
		p, _ := json.Marshal(readAccept(t, name).Predicate)
		res, err := schema.Validate(gojsonschema.NewBytesLoader(p))
		if err != nil {
			t.Fatal(err)
		}
		if !res.Valid() {
			t.Errorf("%s does not match the schema: %v", name, res.Errors())
		}
	}
	for _, key := range []string{`"baselinesMet"`, `"evidenceBundle"`, `"osImage"`, `"kernelVersion"`, `"boardID"`, `"firmware"`, `"level"`} {
		if !strings.Contains(string(raw), key) {
			t.Errorf("schema has no %s", key)
		}
	}
	// A wrong type is refused: the schema is not vacuous.
	res, err := schema.Validate(gojsonschema.NewStringLoader(`{"node": {"osImage": 7}}`))
	if err != nil || res.Valid() {
		t.Errorf("a numeric osImage validates: %v %v", err, res)
	}
}

// TestTemplate: the A3 Ultra fixture's record fills the practice's
// template from its own keys, in the template's order, and every key a
// field names is a key of the predicate.
func TestTemplate(t *testing.T) {
	p := readAccept(t, "records/a3u-network.dsse.json").Predicate
	fields := Template(p)
	if len(fields) != 15 || fields[0].Field != "Node" || fields[14].Field != "Result / evidence URI" {
		t.Fatalf("%d fields: %+v", len(fields), fields)
	}
	by := map[string]TemplateField{}
	for _, f := range fields {
		by[f.Field] = f
	}
	for field, want := range map[string][]string{
		"OS / kernel":                     {p.Node.OSImage, p.Node.KernelVersion},
		"containerd / kubelet":            {p.Node.ContainerRuntime, p.Node.Kubelet},
		"NIC / RDMA driver":               {"8 x mlx5 " + p.Network.Devices[0].Model, p.Network.Devices[0].VendorID},
		"BMC / BIOS / GPU / NIC firmware": {"NIC firmware " + p.Network.Devices[0].Firmware},
		"NCCL / RDMA / storage baseline":  {"network portRateGbps 400 Gb/s, minimum 400 Gb/s (a3-ultragpu-8g rdma_nic_gbps, matrix): met"},
		"Result / evidence URI":           {string(p.Verdict), p.EvidenceBundle.URI},
	} {
		for _, w := range want {
			if w == "" || !strings.Contains(by[field].Value, w) {
				t.Errorf("%s: %q lacks %q", field, by[field].Value, w)
			}
		}
	}
	if by["DCGM diagnostics"].Value != "" {
		t.Errorf("DCGM diagnostics %q for a record whose dcgm stage did not run", by["DCGM diagnostics"].Value)
	}
	keys := jsonKeys(reflect.TypeOf(Predicate{}))
	for _, f := range fields {
		for _, k := range f.Keys {
			if top := strings.SplitN(k, ".", 2)[0]; !keys[top] {
				t.Errorf("%s: key %s is not the predicate's", f.Field, k)
			}
		}
	}
}

// jsonKeys are the JSON names of a struct type's fields.
func jsonKeys(typ reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		out[name] = true
	}
	return out
}
