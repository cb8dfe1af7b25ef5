package main

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func TestKeyList(t *testing.T) {
	chart := fstest.MapFS{
		"Chart.yaml": {Data: []byte("name: demo\nversion: \"1.2.3\"\n")},
		"values.yaml": {Data: []byte(`image: {repository: r, tag: ""}
resources: {}
tolerations: [{key: a}]
nodeSelector: {kubernetes.io/os: linux}
gfd: {enabled: false, securityContext: {privileged: true}}
empty: null
`)},
		"templates/ds.yaml": {Data: []byte(`{{ .Values.image.repository }} {{ $.Values.gfd.enableHostNetwork }}
{{- with .Values.extra.args }}{{ .nested }}{{ end }}
{{ index .Values "node-feature-discovery" "worker" }} {{ index .Values.gfd "sleep-interval" }}`)},
		"templates/sub/_helpers.tpl":  {Data: []byte(`{{ .Values.namespace }}`)},
		"charts/sub/templates/x.yaml": {Data: []byte(`{{ .Values.fromSubchart }}`)},
	}
	got, err := keyList(chart, "demo", "", "v1.2.3", "charts/demo")
	if err != nil {
		t.Fatal(err)
	}
	want := `# demo chart at tag v1.2.3: every values key path (dotted) that values.yaml sets or a template reads.
# Source: charts/demo/values.yaml and charts/demo/templates/ in the chart's public repository at v1.2.3.
# A path ending in a map also allows any key below it only where the template iterates it (e.g. config.map, nodeSelector, tolerations, affinity, resources, annotations, labels).
empty
extra    # read by templates, not defaulted
extra.args    # read by templates, not defaulted
gfd
gfd.enableHostNetwork    # read by templates, not defaulted
gfd.enabled
gfd.securityContext
gfd.securityContext.privileged
gfd.sleep-interval    # read by templates, not defaulted
image
image.repository
image.tag
namespace    # read by templates, not defaulted
node-feature-discovery    # read by templates, not defaulted
node-feature-discovery.worker    # read by templates, not defaulted
nodeSelector
nodeSelector.kubernetes.io/os
resources
tolerations
`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("key list (-want +got):\n%s", diff)
	}

	got, err = keyList(chart, "demo", "4.8.2", "4.5.3-4.8.2", "deployment")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(got), "# demo chart 4.8.2 (repository tag 4.5.3-4.8.2): ") || !strings.Contains(string(got), "\n# Source: deployment/values.yaml and deployment/templates/ in the chart's public repository at 4.5.3-4.8.2.\n") {
		t.Errorf("header of a chart version unlike its tag:\n%s", got)
	}
}
