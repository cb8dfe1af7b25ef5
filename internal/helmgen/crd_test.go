package helmgen

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/xeipuuv/gojsonschema"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/gpuctl/gpuctl/internal/golden"
)

// crdSchemas reads the CustomResourceDefinitions stored in
// testdata/reference/crds (their source: testdata/README.md) and returns
// the OpenAPI v3 schema of each served version, by "apiVersion kind",
// made strict as the API server's pruning is: an object schema that lists
// its properties and neither allows additional ones nor preserves unknown
// fields rejects any other field (the server would drop it silently, so a
// field gpuctl writes there would never take effect).
func crdSchemas(t *testing.T) map[string]*gojsonschema.Schema {
	t.Helper()
	files, err := filepath.Glob("../../testdata/reference/crds/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs under testdata/reference/crds: %v", err)
	}
	out := map[string]*gojsonschema.Schema{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd struct {
			Spec struct {
				Group string
				Names struct{ Kind string }
				// Versions[].Schema.OpenAPIV3Schema is the schema.
				Versions []struct {
					Name   string
					Served bool
					Schema struct {
						OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
					}
				}
			}
		}
		if err := yaml.Unmarshal(data, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, v := range crd.Spec.Versions {
			if !v.Served || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			strict(v.Schema.OpenAPIV3Schema)
			s, err := gojsonschema.NewSchema(gojsonschema.NewGoLoader(v.Schema.OpenAPIV3Schema))
			if err != nil {
				t.Fatalf("%s %s: %v", f, v.Name, err)
			}
			out[crd.Spec.Group+"/"+v.Name+" "+crd.Spec.Names.Kind] = s
		}
	}
	return out
}

// strict sets additionalProperties: false on every object schema with
// properties that says nothing about other fields.
func strict(s map[string]any) {
	if props, ok := s["properties"].(map[string]any); ok {
		_, ap := s["additionalProperties"]
		_, keep := s["x-kubernetes-preserve-unknown-fields"]
		if !ap && !keep {
			s["additionalProperties"] = false
		}
		for _, p := range props {
			if m, ok := p.(map[string]any); ok {
				strict(m)
			}
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		strict(items)
	}
	if ap, ok := s["additionalProperties"].(map[string]any); ok {
		strict(ap)
	}
}

// validateCR checks one object against its CRD's schema; "" when valid.
func validateCR(t *testing.T, schemas map[string]*gojsonschema.Schema, doc []byte) (kind, problems string) {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal(doc, &obj); err != nil {
		t.Fatal(err)
	}
	key, _ := obj["apiVersion"].(string)
	kind, _ = obj["kind"].(string)
	s := schemas[key+" "+kind]
	if s == nil {
		return kind, "no stored CRD for " + key + " " + kind
	}
	b, _ := json.Marshal(obj)
	r, err := s.Validate(gojsonschema.NewBytesLoader(b))
	if err != nil {
		t.Fatal(err)
	}
	var errs []string
	for _, e := range r.Errors() {
		errs = append(errs, e.String())
	}
	return kind, strings.Join(errs, "; ")
}

// TestCustomResourcesMatchCRDs: every object the examples generate whose
// kind client-go's scheme does not know (a custom resource: the Kueue
// ResourceFlavors, ClusterQueues and LocalQueues, and for queued
// provisioning an AdmissionCheck and a ProvisioningRequestConfig,
// kueue.x-k8s.io/v1beta2, GKE's networking.gke.io/v1 Networks and
// GKENetworkParamSets, and the Karpenter v1 NodePools and EC2NodeClasses of
// `generate karpenter`) passes
// the schema of a CRD stored in testdata/reference/crds, strict about
// unknown fields, enums and required fields; a custom kind without a stored
// CRD fails. The core kinds: TestCoreObjectsDecodeStrictly. The GKE
// Networks are Device networks whose names fit Google's 41 characters and
// refer to a generated GKENetworkParamSet; and the schema check does fail
// on an unknown field, a value outside an enum and a missing required field.
func TestCustomResourcesMatchCRDs(t *testing.T) {
	schemas := crdSchemas(t)
	dns := regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	kinds := map[string]int{}
	for _, ex := range golden.ValidExamples(t, "../../examples/*.yaml", asOf) {
		ms, err := Manifests(ex.Spec, Options{})
		if err != nil {
			t.Fatal(err)
		}
		ks, err := Karpenter(ex.Spec, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range append(ms, ks...) {
			if strings.HasPrefix(f.Name, WorkloadDir+"/") {
				continue // a pod template and a Kustomize component, no objects: TestWorkloadFiles
			}
			params := map[string]bool{}
			var refs []string
			for _, doc := range splitDocs(f.Data) {
				var tm metav1.TypeMeta
				if err := yaml.Unmarshal(doc, &tm); err != nil {
					t.Fatal(err)
				}
				if scheme.Scheme.Recognizes(tm.GroupVersionKind()) {
					continue // a core kind
				}
				kind, problems := validateCR(t, schemas, doc)
				if problems != "" {
					t.Errorf("%s %s: %s: %s", ex.Dir, f.Name, kind, problems)
				}
				kinds[tm.APIVersion+" "+kind]++
				if !strings.HasPrefix(tm.APIVersion, "networking.gke.io/") {
					continue
				}
				var o struct {
					Metadata struct{ Name string }
					Spec     struct {
						Type          string
						ParametersRef struct{ Kind, Name string }
					}
				}
				if err := yaml.Unmarshal(doc, &o); err != nil {
					t.Fatal(err)
				}
				if !dns.MatchString(o.Metadata.Name) || len(o.Metadata.Name) > 41 {
					t.Errorf("%s: %s name %q: not a DNS label of at most 41 characters", ex.Dir, kind, o.Metadata.Name)
				}
				switch kind {
				case "GKENetworkParamSet":
					params[o.Metadata.Name] = true
				case "Network":
					if o.Spec.Type != "Device" || o.Spec.ParametersRef.Kind != "GKENetworkParamSet" {
						t.Errorf("%s: Network %s: type %q, parameters %q", ex.Dir, o.Metadata.Name, o.Spec.Type, o.Spec.ParametersRef.Kind)
					}
					refs = append(refs, o.Spec.ParametersRef.Name)
				}
			}
			for _, r := range refs {
				if !params[r] {
					t.Errorf("%s %s: a Network refers to GKENetworkParamSet %s, which is not generated", ex.Dir, f.Name, r)
				}
			}
		}
	}
	for _, k := range []string{
		"networking.gke.io/v1 Network", "networking.gke.io/v1 GKENetworkParamSet",
		KueueAPIVersion + " ResourceFlavor", KueueAPIVersion + " ClusterQueue", KueueAPIVersion + " LocalQueue",
		KueueAPIVersion + " AdmissionCheck", KueueAPIVersion + " ProvisioningRequestConfig",
		KarpenterAPIVersion + " NodePool", KarpenterAWSAPIVersion + " EC2NodeClass",
	} {
		if kinds[k] == 0 {
			t.Errorf("no %s generated: the examples do not exercise it", k)
		}
	}
	// The check can fail.
	for doc, want := range map[string]string{
		"apiVersion: networking.gke.io/v1\nkind: GKENetworkParamSet\nmetadata: {name: x}\nspec: {vpc: a, vpcSubnet: b, deviceMode: NetDevice, mtu: 8244}\n": "mtu",
		"apiVersion: networking.gke.io/v1\nkind: GKENetworkParamSet\nmetadata: {name: x}\nspec: {vpc: a, vpcSubnet: b, deviceMode: Netdevice}\n":            "deviceMode",
		"apiVersion: networking.gke.io/v1\nkind: Network\nmetadata: {name: x}\nspec: {parametersRef: {group: networking.gke.io, name: x}}\n":                "type",
		// Kueue: an unknown field, an enum, a required field.
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: x}\nspec: {nodeLabel: {a: b}}\n":                         "nodeLabel",
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: x}\nspec: {queueingStrategy: FIFO}\n":                      "queueingStrategy",
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: x}\nspec: {resourceGroups: [{coveredResources: [cpu]}]}\n": "flavors",
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: x, namespace: y}\nspec: {clusterQueue: c, flavors: []}\n":    "flavors",
		"apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\nmetadata: {name: x}\n":                                                          "no stored CRD",
		// Karpenter: an interface type outside the enum, an unknown field, a missing required field.
		"apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: x}\nspec: {role: r, amiSelectorTerms: [{alias: al2023@latest}], subnetSelectorTerms: [{tags: {a: b}}], securityGroupSelectorTerms: [{tags: {a: b}}], networkInterfaces: [{networkCardIndex: 0, deviceIndex: 0, interfaceType: efa}]}\n": "interfaceType",
		"apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: x}\nspec: {role: r, amiSelectorTerms: [{alias: al2023@latest}], subnetSelectorTerms: [{tags: {a: b}}], securityGroupSelectorTerms: [{tags: {a: b}}], efaOnly: true}\n":                                                                  "efaOnly",
		"apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: x}\nspec: {template: {spec: {requirements: []}}}\n":                                                                                                                                                                                              "nodeClassRef",
	} {
		if _, problems := validateCR(t, schemas, []byte(doc)); !strings.Contains(problems, want) {
			t.Errorf("schema check of %q: %q, want a problem with %s", doc, problems, want)
		}
	}
}
