package importer

import (
	"strings"
	"testing"

	version "github.com/hashicorp/go-version"
)

// TestModuleDefaultsRows: every row of moddefaults.yaml cites its source at
// the commit it was read at, with the date, and the rows of a module do
// not overlap (a release meets one row's versions at most).
func TestModuleDefaultsRows(t *testing.T) {
	mods, err := decodeModDefaults(modDefaultsYAML)
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) < 4 {
		t.Fatalf("%d modules, want the GKE and EKS registry modules and two cluster-toolkit ones", len(mods))
	}
	for _, m := range mods {
		for i, r := range m.Rows {
			if !strings.Contains(r.Source, r.Commit) || !strings.HasPrefix(r.Source, "https://github.com/") {
				t.Errorf("%s row %d: source %q does not name commit %s", m.Module, i+1, r.Source, r.Commit)
			}
			if r.AsOf != "2026-12-02" {
				t.Errorf("%s row %d: as_of %q", m.Module, i+1, r.AsOf)
			}
			for j, q := range m.Rows {
				if j != i && q.allows.Check(mustVersion(t, strings.TrimPrefix(r.Release, "v"))) {
					t.Errorf("%s: release %s of row %d also meets row %d (%s)", m.Module, r.Release, i+1, j+1, q.Versions)
				}
			}
		}
	}
}

func TestModuleDefaultsRefusesBadFacts(t *testing.T) {
	for name, y := range map[string]string{
		"unknown field": "modules: [{module: m, rows: [{versions: '>= 1', source: s, commit: c, as_of: d, colour: red}]}]",
		"no source":     "modules: [{module: m, rows: [{versions: '>= 1', commit: c, as_of: d}]}]",
		"bad versions":  "modules: [{module: m, rows: [{versions: 'about 3', source: s, commit: c, as_of: d}]}]",
	} {
		if _, err := decodeModDefaults([]byte(y)); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// TestModuleDefaultsPick: the row of the newest release a constraint
// allows; the newest row and a note without a constraint.
func TestModuleDefaultsPick(t *testing.T) {
	const gke, eks = "terraform-google-modules/kubernetes-engine/google", "terraform-aws-modules/eks/aws"
	for _, c := range []struct {
		source, constraint string
		release, image     string
		note               bool
	}{
		{gke, "~> 44.0", "v44.2.0", "COS_CONTAINERD", false},
		{gke, ">= 30.0.0", "v44.2.0", "COS_CONTAINERD", false},
		{gke, "~> 25.0", "v19.0.0", "COS_CONTAINERD", false},
		{gke, ">= 10.0, < 26.0", "v19.0.0", "COS_CONTAINERD", false},
		{gke, "= 18.0.0", "v15.0.0", "COS", false},
		{gke, "", "v44.2.0", "COS_CONTAINERD", true},
		{"registry.terraform.io/" + gke + "//modules/beta-private-cluster", "36.0.0", "v44.2.0", "COS_CONTAINERD", false},
		{gke + "//modules/private-cluster", "~> 20.0", "v19.0.0", "COS_CONTAINERD", false},
		{eks, "~> 20.0", "v20.37.2", "", false},
		{eks, "~> 19.21", "v20.37.2", "", false},
		{eks, ">= 20.0", "v21.19.0", "AL2023_x86_64_STANDARD", false},
		{eks, "~> 21.0", "v21.19.0", "AL2023_x86_64_STANDARD", false},
		{eks, "", "v21.19.0", "AL2023_x86_64_STANDARD", true},
	} {
		r, note, ok := moduleDefaults(c.source, c.constraint)
		if !ok {
			t.Errorf("%s %q: no row", c.source, c.constraint)
			continue
		}
		img, _ := r.NodePool["image_type"].(string)
		if c.source == eks || strings.HasPrefix(c.source, eks) {
			img, _ = r.NodePool["ami_type"].(string)
		}
		if r.Release != c.release || img != c.image || (note != "") != c.note {
			t.Errorf("%s %q: row %s image %q note %q, want %s %q note %v", c.source, c.constraint, r.Release, img, note, c.release, c.image, c.note)
		}
	}
	_, note, _ := moduleDefaults(eks, "")
	if note != "no version constraint: the defaults of terraform-aws-modules/eks/aws v21.x were applied" {
		t.Errorf("note %q", note)
	}
	for _, src := range []string{gke + "//modules/gke-standard-cluster", "terraform-aws-modules/vpc/aws"} {
		if _, _, ok := moduleDefaults(src, ""); ok {
			t.Errorf("%s: a row, want none (no facts)", src)
		}
	}
	if _, _, ok := moduleDefaults(eks, "< 19.0.0"); ok {
		t.Errorf("eks < 19: a row, want none (no row is that old)")
	}
}

func TestModuleDefaultsValues(t *testing.T) {
	r, _, _ := moduleDefaults("terraform-google-modules/kubernetes-engine/google", "~> 44.0")
	d := &defaultsObj{values: r.NodePool, what: "gke", at: Origin{File: "main.tf", Line: 3}}
	if s, _ := d.get("machine_type").str(); s != "e2-medium" {
		t.Errorf("machine_type %q", s)
	}
	if n, _ := d.get("disk_size_gb").int(); n != 100 {
		t.Errorf("disk_size_gb %d", n)
	}
	if b, ok := d.get("auto_repair").bool(); !ok || !b {
		t.Errorf("auto_repair %v %v", b, ok)
	}
	if x := d.get("accelerator_type"); !x.absent() {
		t.Errorf("accelerator_type is not a default: %#v", x)
	}
	if at := d.get("machine_type").at; at.Line != 3 || at.Note != "module default" {
		t.Errorf("origin %+v", at)
	}
	e, _, _ := moduleDefaults("terraform-aws-modules/eks/aws", "~> 21.0")
	if l, _ := (&defaultsObj{values: e.NodePool}).get("instance_types").strs(); len(l) != 1 || l[0] != "t3.medium" {
		t.Errorf("instance_types %v", l)
	}
	if bpNodePoolDefaults["disk_size_gb"] != int64(100) || bpClusterDefaults["release_channel"] != "UNSPECIFIED" {
		t.Errorf("blueprint defaults %v %v", bpNodePoolDefaults, bpClusterDefaults)
	}
}

func mustVersion(t *testing.T, s string) *version.Version {
	t.Helper()
	v, err := version.NewVersion(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestPlaceholderVar: the blanks and placeholders of a deployment file are
// no values; an upper-case word is one only where real values are lower
// case.
func TestPlaceholderVar(t *testing.T) {
	for _, c := range []struct {
		name  string
		value any
		want  bool
	}{
		{"machine_type", nil, true},
		{"region", "COMPUTE_REGION", true},
		{"zone", "COMPUTE_ZONE", true},
		{"reservation", "RESERVATION_NAME", true},
		{"deployment_name", "DEPLOYMENT_NAME", true},
		{"project_id", "<your project ID>", true},
		{"image_type", "COS_CONTAINERD", false},
		{"release_channel", "RAPID", false},
		{"region", "us-central1", false},
		{"num_gpus", int64(2), false},
	} {
		got := placeholderVar(c.name, &ynode{kind: yScalar, scalar: c.value}) != ""
		if got != c.want {
			t.Errorf("%s = %v: placeholder %v, want %v", c.name, c.value, got, c.want)
		}
	}
}
