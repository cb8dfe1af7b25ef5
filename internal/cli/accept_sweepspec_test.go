package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/spec"
)

const sweepExample = "../../examples/gke-h100-acceptance-sweep.yaml"

// sweepDryRunRBAC is the RBAC accept --sweep --dry-run -o yaml prints with
// args and the binding to the sweep's ServiceAccount in ns.
func sweepDryRunRBAC(t *testing.T, ns string, args ...string) []map[string]any {
	t.Helper()
	streams, _, out, errOut := TestStreams()
	args = append([]string{"accept", "--sweep", "--dry-run", "-o", "yaml", "--bind", "serviceaccount:" + ns + ":gpuctl-accept-sweep"}, args...)
	if code := RunWithFactory(context.Background(), args, streams, fakeFactory(fake.NewClientset())); code != 0 {
		t.Fatalf("accept %v: exit %d: %s", args, code, errOut)
	}
	return rbacDocs(t, out.Bytes())
}

// TestSweepSpecDryRunIsGeneratedRBAC: accept --sweep --dry-run --spec
// takes namespace, stages and records from spec.acceptance, so that its
// RBAC bound to the sweep's ServiceAccount is exactly the generated file's:
// for the example and for a spec with another namespace, the dcgm stage (nv-hostengine: the baseline level) and
// records on a volume.
func TestSweepSpecDryRunIsGeneratedRBAC(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(sweepExample)
	if err != nil {
		t.Fatal(err)
	}
	other := strings.NewReplacer(
		"    stages: [kubernetes, inventory, topology, cuda]\n", "    namespace: accept-x\n    stages: [kubernetes, inventory, dcgm]\n",
		"records: {configMap: true}", "records: {persistentVolumeClaim: {claimName: gpuctl-records, path: /records}}").Replace(string(b))
	if other == string(b) {
		t.Fatal("the example changed: the variant replaced nothing")
	}
	otherFile := filepath.Join(t.TempDir(), "other.yaml")
	if err := os.WriteFile(otherFile, []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ file, ns string }{{sweepExample, "gpuctl-acceptance"}, {otherFile, "accept-x"}} {
		_, want := generatedSweep(t, c.file)
		for _, env := range [][]string{nil, {"--env", "dev"}} {
			got := sweepDryRunRBAC(t, c.ns, append([]string{"--spec", c.file}, env...)...)
			if d := cmp.Diff(want, got); d != "" || len(want) == 0 {
				t.Errorf("%s %v: dry-run RBAC differs from the generated file's (-generated +dry run):\n%s", c.file, env, d)
			}
		}
	}
}

// TestSweepSpecDefaultsYieldToFlags: the flags given win over
// spec.acceptance: -n and --records-configmap=false change the RBAC.
func TestSweepSpecDefaultsYieldToFlags(t *testing.T) {
	t.Parallel()
	_, generated := generatedSweep(t, sweepExample)
	got := sweepDryRunRBAC(t, "elsewhere", "--spec", sweepExample, "-n", "elsewhere", "--records-configmap=false")
	if len(got) == 0 || cmp.Equal(generated, got) {
		t.Fatalf("RBAC with -n elsewhere equals the generated one")
	}
	for _, d := range got {
		// --mark's Events go to namespace default (accept.EventNamespace).
		if m, _ := d["metadata"].(map[string]any); m["namespace"] != nil && m["namespace"] != "elsewhere" && m["namespace"] != accept.EventNamespace {
			t.Errorf("%s %s in namespace %v, want elsewhere", d["kind"], m["name"], m["namespace"])
		}
		if rules, _ := json.Marshal(d["rules"]); strings.Contains(string(rules), `"configmaps"`) {
			t.Errorf("%s grants configmaps with --records-configmap=false", d["kind"])
		}
	}
}

// TestSweepSpecDefaults: what spec.acceptance (as --env resolves it) sets
// of the flags not given, and that a given flag or no --sweep keeps its
// value.
func TestSweepSpecDefaults(t *testing.T) {
	t.Parallel()
	doc, err := spec.Load(sweepExample, nil)
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		ns, maxUnhealthy string
		stages           []string
		parallel         int
		configMap        bool
	}
	for _, c := range []struct {
		args []string
		want got
	}{
		{[]string{"--sweep"}, got{"gpuctl-acceptance", "10%", []string{"kubernetes", "inventory", "topology", "cuda"}, 2, true}},
		{[]string{"--sweep", "--env", "dev"}, got{"gpuctl-acceptance", "10%", []string{"kubernetes", "inventory", "topology", "cuda"}, 1, true}},
		{[]string{"--sweep", "-n", "x", "--stages", "kubernetes", "--parallel", "3", "--max-unhealthy", "1", "--records-configmap=false"}, got{"x", "1", []string{"kubernetes"}, 3, false}},
		{nil, got{"", "", nil, 1, false}},
	} {
		o := &acceptOptions{kube: newKubeFlags()}
		cmd := &cobra.Command{}
		o.kube.AddFlags(cmd)
		o.addSelectionFlags(cmd.Flags())
		o.addStageFlags(cmd.Flags())
		o.addMarkFlags(cmd.Flags())
		o.addSweepFlags(cmd.Flags())
		if err := cmd.ParseFlags(c.args); err != nil {
			t.Fatal(err)
		}
		if err := o.sweepSpecDefaults(cmd.Flags(), doc); err != nil {
			t.Fatal(err)
		}
		g := got{*o.kube.config.Namespace, o.maxUnhealthy, o.stages, o.parallel, o.recordsConfigMap}
		if d := cmp.Diff(c.want, g, cmp.AllowUnexported(got{})); d != "" || (g.stages != nil && !slices.Equal(g.stages, c.want.stages)) {
			t.Errorf("%v: (-want +got)\n%s", c.args, d)
		}
	}
}

// TestSweepSpecImagesAndPrivilege: spec.acceptance.images are the default
// --image STAGE=REF flags (in stage order) and allowPrivileged the default
// of --allow-privileged, as the generated CronJob passes them; flags given
// win.
func TestSweepSpecImagesAndPrivilege(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(sweepExample)
	if err != nil {
		t.Fatal(err)
	}
	variant := strings.Replace(string(b), "    records: {configMap: true}\n",
		"    records: {configMap: true}\n    allowPrivileged: true\n    images: {topology: mirror.example/cuda:12.4.1-base, inventory: mirror.example/cuda:12.4.1-base-ubuntu22.04}\n", 1)
	if variant == string(b) {
		t.Fatal("the example changed: the variant replaced nothing")
	}
	doc, err := spec.Parse("variant.yaml", []byte(variant))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args   []string
		images []string
		priv   bool
	}{
		{[]string{"--sweep"}, []string{"inventory=mirror.example/cuda:12.4.1-base-ubuntu22.04", "topology=mirror.example/cuda:12.4.1-base"}, true},
		{[]string{"--sweep", "--image", "cuda=x/y:1", "--allow-privileged=false"}, []string{"cuda=x/y:1"}, false},
	} {
		o := &acceptOptions{kube: newKubeFlags()}
		cmd := &cobra.Command{}
		o.kube.AddFlags(cmd)
		o.addSelectionFlags(cmd.Flags())
		o.addStageFlags(cmd.Flags())
		o.addMarkFlags(cmd.Flags())
		o.addSweepFlags(cmd.Flags())
		if err := cmd.ParseFlags(c.args); err != nil {
			t.Fatal(err)
		}
		if err := o.sweepSpecDefaults(cmd.Flags(), doc); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(o.images, c.images) || o.privileged != c.priv {
			t.Errorf("%v: images %v privileged %v, want %v %v", c.args, o.images, o.privileged, c.images, c.priv)
		}
	}
}
