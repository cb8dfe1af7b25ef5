//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// genNamespace is the namespace TestGeneratedObjects creates for the
// workload pods, beside the team namespaces of the generated files.
const genNamespace = "e2e-generated"

// genFieldManager is the field manager of every apply: what `kubectl apply
// --server-side --field-manager gpuctl` would send.
const genFieldManager = "gpuctl"

// clusterNamespaces are the namespaces every cluster has; a generated object
// may live in them without the files creating them (the GPUDirect
// DaemonSets of nccl.yaml run in kube-system).
var clusterNamespaces = []string{"default", "kube-system"}

// genKinds are the kinds the generators write (Pod: the workload pod
// templates; Job: the workload Kustomize components built over a Job;
// CronJob, ServiceAccount and the RBAC kinds: the acceptance sweep's
// acceptance.yaml).
// TestGeneratedObjects fails where the shipped examples give none of one.
var genKinds = []string{
	"ResourceFlavor", "ClusterQueue", "LocalQueue", "AdmissionCheck", "ProvisioningRequestConfig",
	"Network", "GKENetworkParamSet", "NodePool", "EC2NodeClass",
	"ConfigMap", "DaemonSet", "Namespace", "ResourceQuota", "NetworkPolicy", "Pod", "Job",
	"CronJob", "ServiceAccount", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding",
}

// genLayers are what `generate all` writes under --out: the Kubernetes
// objects of manifests/ and karpenter/, which this test sends; Terraform and
// Helm values (not Kubernetes objects: internal/hclgen checks the Terraform
// against the providers' schemas, internal/helmgen the values against the
// charts' keys) and the file list.
var genLayers = []string{"manifests", "karpenter", "terraform", "helm", ".gpuctl-files"}

// genObject is one object of the generated files and where it comes from.
type genObject struct {
	file string // relative to the generate output
	obj  *unstructured.Unstructured
}

func (o genObject) String() string {
	return fmt.Sprintf("%s: %s %s", o.file, o.obj.GetKind(), objectRef(o.obj))
}

// genEnv is what one environment's files hold: its Namespaces (applied for
// real) and every other object (dry-run).
type genEnv struct {
	namespaces []genObject
	objects    []genObject
}

// TestGeneratedObjects: every object `gpuctl generate all` writes for every
// shipped example that validates, in every environment, is accepted by the
// real kube-apiserver with the CRDs of testdata/reference/crds installed
// (Kueue v0.19.2, GKE networking v0.2.11, Karpenter v1.14.1): a server-side
// apply dry run (field manager gpuctl, field validation Strict, so an
// unknown or duplicate field is a rejection) of every manifests/ and
// karpenter/ object, the teams.yaml Namespaces applied for real first. The
// workload pod templates go in as Pods, in the namespaces whose NetworkPolicy
// lets the pool's pods reach each other (the pool's teams: their Pod Security
// level is enforced) and in a namespace of the test's; the workload
// Kustomize components, built by krusty over a Job, go in as that Job.
// Every namespaced object lives in a namespace its files create or every
// cluster has. Helm values are not objects and are not sent.
func TestGeneratedObjects(t *testing.T) {
	ctx := context.Background()
	start := time.Now()
	g := newGenRun(t)
	g.installCRDs(ctx, t)
	g.applyNamespace(ctx, t, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": genNamespace}}})
	outs := generateExamples(t)
	kinds := map[string]int{}
	total := 0
	for _, out := range outs {
		for _, env := range readGenerated(t, out) {
			total += g.checkEnv(ctx, t, filepath.Base(out), env)
			for _, o := range append(env.namespaces, env.objects...) {
				kinds[o.obj.GetKind()]++
			}
		}
	}
	for _, k := range genKinds {
		if kinds[k] == 0 {
			t.Errorf("no %s among the generated objects of the examples", k)
		}
	}
	t.Logf("%d objects of %d examples sent to the API server (kinds in the files: %v) in %s", total, len(outs), kinds, time.Since(start).Round(time.Millisecond))
}

// genRun holds TestGeneratedObjects' clients and the namespaces it applied
// (deleted when the test ends).
type genRun struct {
	dyn     dynamic.Interface
	mapper  *restmapper.DeferredDiscoveryRESTMapper
	applied map[string]bool
}

// newGenRun returns a genRun with a dynamic client and a discovery REST
// mapper of the e2e API server (KUBECONFIG), whose namespaces are deleted
// when the test ends.
func newGenRun(t *testing.T) *genRun {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	g := &genRun{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(client.Discovery())), applied: map[string]bool{}}
	t.Cleanup(func() {
		for ns := range g.applied {
			err := client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting namespace %s: %v", ns, err)
			}
		}
	})
	return g
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// installCRDs applies every CRD of testdata/reference/crds and waits until
// each is Established and its kind is in discovery; they are deleted when
// the test ends.
func (g *genRun) installCRDs(ctx context.Context, t *testing.T) {
	t.Helper()
	files, err := filepath.Glob("../../testdata/reference/crds/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs under testdata/reference/crds: %v", err)
	}
	var crds []*unstructured.Unstructured
	for _, f := range files {
		for _, o := range decodeFile(t, f) {
			if _, err := g.dyn.Resource(crdResource).Apply(ctx, o.GetName(), o, metav1.ApplyOptions{FieldManager: genFieldManager, Force: true}); err != nil {
				t.Fatalf("%s: CRD %s: %v", f, o.GetName(), err)
			}
			crds = append(crds, o)
		}
	}
	t.Cleanup(func() {
		for _, o := range crds {
			_ = g.dyn.Resource(crdResource).Delete(context.Background(), o.GetName(), metav1.DeleteOptions{})
		}
	})
	for _, o := range crds {
		eventually(t, 30*time.Second, "CRD "+o.GetName()+" Established", func() bool {
			crd, err := g.dyn.Resource(crdResource).Get(ctx, o.GetName(), metav1.GetOptions{})
			return err == nil && conditionTrue(crd, "Established")
		})
		group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
		eventually(t, 30*time.Second, "kind "+kind+"."+group+" in discovery", func() bool {
			if _, err := g.mapper.RESTMapping(schema.GroupKind{Group: group, Kind: kind}); err != nil {
				g.mapper.Reset()
				return false
			}
			return true
		})
	}
}

// conditionTrue reports whether o's status has condition typ True.
func conditionTrue(o *unstructured.Unstructured, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ && m["status"] == "True" {
			return true
		}
	}
	return false
}

// generateExamples runs `gpuctl generate all --as-of 2026-11-29` on every
// examples/*.yaml and returns the output folders of those it generates; one
// it refuses must exit 3 (validate's errors) and write nothing, as `make
// test-generate` holds.
func generateExamples(t *testing.T) []string {
	t.Helper()
	specs, err := filepath.Glob("../../examples/*.yaml")
	if err != nil || len(specs) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	root := t.TempDir()
	var outs []string
	for _, s := range specs {
		out := filepath.Join(root, strings.TrimSuffix(filepath.Base(s), ".yaml"))
		cmd := exec.Command(gpuctl, "generate", "all", s, "--as-of", "2026-11-29", "--out", out)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		switch {
		case err == nil:
			outs = append(outs, out)
		case errors.As(err, &ee) && ee.ExitCode() == 3:
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s: refused (exit 3) but wrote %s", s, out)
			}
			t.Logf("%s: refused (exit 3: validate's errors), nothing written", filepath.Base(s))
		default:
			t.Fatalf("%s: generate: %v: %s", s, err, stderr.String())
		}
	}
	if len(outs) == 0 {
		t.Fatal("no example generates")
	}
	return outs
}

// readGenerated returns the objects of one generate output folder, per
// environment: manifests/<env>/ (the workload/ pod templates as Pods, the
// workload/<pool>/ components built over a Job) and karpenter/<env>/.
// Any other YAML file under those folders fails the test, so that a new
// kind of output is not left unchecked.
func readGenerated(t *testing.T, out string) []*genEnv {
	t.Helper()
	top, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range top {
		if !slices.Contains(genLayers, e.Name()) {
			t.Errorf("%s: %s is a layer this test does not know", out, e.Name())
		}
	}
	envs := map[string]*genEnv{}
	for _, layer := range []string{"manifests", "karpenter"} {
		dirs, _ := os.ReadDir(filepath.Join(out, layer))
		for _, d := range dirs {
			e := envs[d.Name()]
			if e == nil {
				e = &genEnv{}
				envs[d.Name()] = e
			}
			readEnvDir(t, out, filepath.Join(layer, d.Name()), e)
		}
	}
	if len(envs) == 0 {
		t.Errorf("%s: no manifests", out)
	}
	var r []*genEnv
	for _, n := range slices.Sorted(maps.Keys(envs)) {
		r = append(r, envs[n])
	}
	return r
}

// readEnvDir adds the objects under out/dir to e.
func readEnvDir(t *testing.T, out, dir string, e *genEnv) {
	t.Helper()
	err := filepath.WalkDir(filepath.Join(out, dir), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(out, p)
			e.addFile(t, rel, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// addFile adds the objects of file p (rel: its path under the generate
// output, <layer>/<env>/...) to e.
func (e *genEnv) addFile(t *testing.T, rel, p string) {
	t.Helper()
	parts := strings.Split(filepath.ToSlash(rel), "/")
	workload := len(parts) > 3 && parts[2] == "workload"
	switch {
	case len(parts) == 3 && strings.HasSuffix(p, ".yaml"):
		for _, o := range decodeFile(t, p) {
			g := genObject{file: rel, obj: o}
			if o.GetKind() == "Namespace" {
				e.namespaces = append(e.namespaces, g)
			} else {
				e.objects = append(e.objects, g)
			}
		}
	case workload && len(parts) == 4 && (strings.HasSuffix(p, "-pod-template.yaml") || strings.HasSuffix(p, "-preflight.yaml")):
		e.objects = append(e.objects, genObject{file: rel, obj: podOfTemplate(t, p)})
	case workload && len(parts) == 5 && parts[4] == "kustomization.yaml":
		e.objects = append(e.objects, genObject{file: rel, obj: jobOfComponent(t, filepath.Dir(p))})
	case workload && len(parts) == 5 && parts[4] == "fabric-patch.yaml":
		// the component's patch: checked through the Job of its kustomization.yaml
	default:
		t.Errorf("%s: a generated file this test does not know how to check", rel)
	}
}

// decodeFile returns the objects of a multi-document YAML file (empty
// documents skipped).
func decodeFile(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return decodeObjects(t, path, data)
}

func decodeObjects(t *testing.T, name string, data []byte) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return objs
		} else if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(m) > 0 {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
}

// trainingImage is the image a user's training container runs: the
// workload files leave it to the workload (the component patches the
// workload's container; the pod template's training container has none).
const trainingImage = "nvcr.io/nvidia/pytorch:25.01-py3"

// podOfTemplate returns the Pod of a workload PodTemplateSpec file, named
// after the file (<pool>-pod-template.yaml: pod <pool>; the preflight
// snippet <pool>-preflight.yaml: pod <pool>-preflight), with what the user
// adds when copying it: the training container's image (trainingImage),
// where it has none.
func podOfTemplate(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	objs := decodeFile(t, path)
	if len(objs) != 1 {
		t.Fatalf("%s: %d documents, want one PodTemplateSpec", path, len(objs))
	}
	tpl := objs[0].Object
	md, _ := tpl["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
	}
	md["name"] = strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), "-pod-template.yaml"), ".yaml")
	cs, _, _ := unstructured.NestedSlice(tpl, "spec", "containers")
	for _, c := range cs {
		if c, ok := c.(map[string]any); ok && c["name"] == "training" && c["image"] == nil {
			c["image"] = trainingImage
		}
	}
	if err := unstructured.SetNestedSlice(tpl, cs, "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": tpl["spec"]}}
}

// componentJob is the Job a user's kustomization lists beside a workload
// component: a training container with its own image, tolerating the GPU
// taint (the component's patch sets no tolerations).
const componentJob = `apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  template:
    spec:
      restartPolicy: Never
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers:
      - name: training
        image: ` + trainingImage + `
        command: [python3, train.py]
`

// jobOfComponent builds the Kustomize component in dir with Kustomize's own
// library (krusty) over componentJob and returns the Job it gives.
func jobOfComponent(t *testing.T, dir string) *unstructured.Unstructured {
	t.Helper()
	mem := filesys.MakeFsInMemory()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := mem.WriteFile("/app/component/"+e.Name(), data); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range map[string]string{
		"/app/kustomization.yaml": "resources: [job.yaml]\ncomponents: [component]\n",
		"/app/job.yaml":           componentJob,
	} {
		if err := mem.WriteFile(name, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(mem, "/app")
	if err != nil {
		t.Fatalf("%s: kustomize build: %v", dir, err)
	}
	data, err := res.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	objs := decodeObjects(t, dir, data)
	if len(objs) != 1 || objs[0].GetKind() != "Job" {
		t.Fatalf("%s: kustomize build gave %d objects, want the Job", dir, len(objs))
	}
	objs[0].SetName(filepath.Base(dir))
	return objs[0]
}

// checkEnv applies env's Namespaces for real, then dry-runs every other
// object in parallel, and returns how many objects it sent. Each rejection
// is an error naming the file, the object and the API server's message.
func (g *genRun) checkEnv(ctx context.Context, t *testing.T, example string, env *genEnv) int {
	t.Helper()
	created := append([]string{}, clusterNamespaces...)
	for _, ns := range env.namespaces {
		g.applyNamespace(ctx, t, ns.obj)
		created = append(created, ns.obj.GetName())
	}
	var sends []genObject
	for _, o := range env.objects {
		sends = append(sends, placed(t, example, env, o, created)...)
	}
	var eg errgroup.Group
	eg.SetLimit(16)
	for _, o := range sends {
		eg.Go(func() error {
			if err := g.dryRunApply(ctx, o.obj); err != nil {
				t.Errorf("%s/%s: rejected: %v", example, o, err)
			}
			return nil
		})
	}
	_ = eg.Wait()
	return len(env.namespaces) + len(sends)
}

// placed returns o as it is sent: a workload Pod or Job once in the test's
// namespace and once in each namespace whose NetworkPolicy selects its
// pods; any other object as it is, whose namespace must be one of created.
func placed(t *testing.T, example string, env *genEnv, o genObject, created []string) []genObject {
	t.Helper()
	if !strings.Contains(o.file, "/workload/") {
		if ns := o.obj.GetNamespace(); ns != "" && !slices.Contains(created, ns) {
			t.Errorf("%s/%s: namespace %s is neither created by the environment's files nor one every cluster has", example, o, ns)
		}
		return []genObject{o}
	}
	podLabels := o.obj.GetLabels()
	if o.obj.GetKind() == "Job" {
		podLabels, _, _ = unstructured.NestedStringMap(o.obj.Object, "spec", "template", "metadata", "labels")
	}
	var out []genObject
	for _, ns := range append([]string{genNamespace}, peerNamespaces(env, podLabels)...) {
		c := o.obj.DeepCopy()
		c.SetNamespace(ns)
		out = append(out, genObject{file: o.file, obj: c})
	}
	if len(out) == 1 {
		t.Logf("%s/%s: no team namespace lets these pods reach each other", example, o)
	}
	return out
}

// peerNamespaces returns the namespaces of env whose NetworkPolicy selects
// pods with podLabels by a non-empty selector (teams.yaml's allow-nccl-<pool>:
// the namespaces of the pool's teams), sorted.
func peerNamespaces(env *genEnv, podLabels map[string]string) []string {
	var out []string
	for _, o := range env.objects {
		if o.obj.GetKind() != "NetworkPolicy" {
			continue
		}
		ml, _, _ := unstructured.NestedStringMap(o.obj.Object, "spec", "podSelector", "matchLabels")
		if len(ml) == 0 || !labels.SelectorFromSet(ml).Matches(labels.Set(podLabels)) {
			continue
		}
		if !slices.Contains(out, o.obj.GetNamespace()) {
			out = append(out, o.obj.GetNamespace())
		}
	}
	sort.Strings(out)
	return out
}

// applyNamespace applies ns for real (server-side, the one field manager,
// so that an earlier example's labels are replaced by this one's), waits
// for its default ServiceAccount (a Pod's admission needs it) and marks it
// for deletion when the test ends.
func (g *genRun) applyNamespace(ctx context.Context, t *testing.T, ns *unstructured.Unstructured) {
	t.Helper()
	res := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	if _, err := g.dyn.Resource(res).Apply(ctx, ns.GetName(), ns, metav1.ApplyOptions{FieldManager: genFieldManager, Force: true}); err != nil {
		t.Fatalf("Namespace %s: rejected: %v", ns.GetName(), err)
	}
	name := ns.GetName()
	g.applied[name] = true
	eventually(t, 30*time.Second, "ServiceAccount default in "+name, func() bool {
		_, err := client.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	})
}

// dryRunApply sends o as a server-side apply with dryRun=All and field
// validation Strict (an unknown or duplicate field is a rejection).
func (g *genRun) dryRunApply(ctx context.Context, o *unstructured.Unstructured) error {
	gvk := o.GroupVersionKind()
	m, err := g.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return err
	}
	data, err := yaml.Marshal(o.Object)
	if err != nil {
		return err
	}
	var r dynamic.ResourceInterface = g.dyn.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		r = g.dyn.Resource(m.Resource).Namespace(o.GetNamespace())
	}
	force := true
	_, err = r.Patch(ctx, o.GetName(), types.ApplyYAMLPatchType, data, metav1.PatchOptions{
		FieldManager: genFieldManager, Force: &force, DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"})
	return err
}

// objectRef is namespace/name, or name for a cluster-scoped object.
func objectRef(o *unstructured.Unstructured) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}
