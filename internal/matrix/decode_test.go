package matrix

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/goccy/go-yaml"
)

// TestDecodersAgree: decode (go.yaml.in/yaml/v3) reads every embedded data
// file into the same values as goccy/go-yaml, the spec's YAML library, with
// unknown fields refused.
func TestDecodersAgree(t *testing.T) {
	c := &catalog{}
	for _, f := range []struct {
		name string
		v    any
	}{
		{"cuda.yaml", &c.cuda}, {"gpus.yaml", &c.gpus}, {"drivers.yaml", &c.drivers},
		{"aws.yaml", &c.aws}, {"gcp.yaml", &c.gcp}, {"operator.yaml", &c.operator}, {"nccl.yaml", &c.nccl},
	} {
		if err := decode(f.name, f.v); err != nil {
			t.Fatal(err)
		}
		b, err := dataFS.ReadFile("data/" + f.name)
		if err != nil {
			t.Fatal(err)
		}
		want := reflect.New(reflect.TypeOf(f.v).Elem())
		if err := yaml.NewDecoder(bytes.NewReader(b), yaml.DisallowUnknownField()).Decode(want.Interface()); err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		if got := reflect.ValueOf(f.v).Elem().Interface(); !reflect.DeepEqual(got, want.Elem().Interface()) {
			t.Errorf("%s: go.yaml.in/yaml/v3 and goccy/go-yaml decode different values:\n%+v\n%+v", f.name, got, want.Elem().Interface())
		}
	}
	if err := decode("gpus.yaml", &struct{ Other int }{}); err == nil {
		t.Error("decode accepts unknown fields")
	}
}
