package spec

import "testing"

// TestAddonFields: addons.devicePlugin.nodeSelector decodes, and an unset
// gpuOperator.driver.enabled stays nil (the chart default), distinct from
// an explicit false.
func TestAddonFields(t *testing.T) {
	const doc = `apiVersion: gpuctl.dev/v1alpha1
kind: ClusterSpec
metadata: {name: t}
spec:
  provider: eks
  addons:
    devicePlugin: {provider: helm, nodeSelector: {accelerator: nvidia}}
    gpuOperator: {enabled: true, driver: {version: "580.173.02"}, toolkit: {enabled: false}}
  environments:
    off:
      addons:
        gpuOperator: {driver: {enabled: false}}
`
	d, err := Parse("t.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	cs, err := d.Resolve("")
	if err != nil {
		t.Fatal(err)
	}
	a := cs.Spec.Addons
	if a.DevicePlugin.NodeSelector["accelerator"] != "nvidia" {
		t.Errorf("nodeSelector = %v", a.DevicePlugin.NodeSelector)
	}
	if a.GPUOperator.Driver.Enabled != nil {
		t.Errorf("driver.enabled unset decoded as %v, want nil", *a.GPUOperator.Driver.Enabled)
	}
	if e := a.GPUOperator.Toolkit.Enabled; e == nil || *e {
		t.Errorf("toolkit.enabled = %v, want false", e)
	}
	off, err := d.Resolve("off")
	if err != nil {
		t.Fatal(err)
	}
	if e := off.Spec.Addons.GPUOperator.Driver.Enabled; e == nil || *e {
		t.Errorf("overlay driver.enabled = %v, want false", e)
	}
	if off.Spec.Addons.GPUOperator.Driver.Version != "580.173.02" {
		t.Errorf("overlay lost driver.version: %q", off.Spec.Addons.GPUOperator.Driver.Version)
	}
}
