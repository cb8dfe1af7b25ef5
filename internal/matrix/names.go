package matrix

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/gpuctl/gpuctl/internal/spec"
)

// Rules on names, labels, taints and tags that Kubernetes or the cloud would
// reject. A spec that breaks them is never generated.
const (
	RuleSpecName  = "SPEC-NAME-INVALID"
	RuleSpecLabel = "SPEC-LABEL-INVALID"
	RuleSpecTaint = "SPEC-TAINT-INVALID"
	RuleSpecTag   = "SPEC-TAG-INVALID"
)

const (
	sourceK8sNames  = "https://kubernetes.io/docs/concepts/overview/working-with-objects/names/"
	sourceK8sLabels = "https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set"
	sourceK8sTaints = "https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/"
	sourceGCPLabels = "https://cloud.google.com/compute/docs/labeling-resources#requirements"
	sourceGKEPool   = "https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters.nodePools"
	sourceAWSTags   = "https://docs.aws.amazon.com/tag-editor/latest/userguide/tagging.html#tag-conventions"
	sourceEKSNames  = "https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateNodegroup.html"
)

var (
	dnsLabel      = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	gkeName       = regexp.MustCompile(`^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$`)
	eksName       = regexp.MustCompile(`^[0-9A-Za-z][A-Za-z0-9_-]{0,62}$`)
	eksCluster    = regexp.MustCompile(`^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$`)
	labelName     = regexp.MustCompile(`^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`)
	dnsSubdomain  = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	gcpLabelKey   = regexp.MustCompile(`^[\p{Ll}\p{Lo}][\p{Ll}\p{Lo}\p{N}_-]{0,62}$`)
	gcpLabelValue = regexp.MustCompile(`^[\p{Ll}\p{Lo}\p{N}_-]{0,63}$`)
	awsTagChars   = regexp.MustCompile(`^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$`)
	migProfile    = regexp.MustCompile(`^[0-9]g\.[0-9]+gb(\+me)?$`)
)

// LabelKeyError says why key is not a valid Kubernetes label (or taint)
// key, or "" when it is: an optional DNS subdomain prefix of at most 253
// characters and "/", then a name of at most 63 characters of alphanumerics,
// '-', '_' and '.', starting and ending alphanumeric.
func LabelKeyError(key string) string {
	name := key
	if i := strings.LastIndex(key, "/"); i >= 0 {
		prefix := key[:i]
		name = key[i+1:]
		if prefix == "" || len(prefix) > 253 || !dnsSubdomain.MatchString(prefix) {
			return fmt.Sprintf("prefix %q is not a DNS subdomain (lowercase, at most 253 characters)", prefix)
		}
	}
	if name == "" || len(name) > 63 || !labelName.MatchString(name) {
		return fmt.Sprintf("name %q must be 1-63 characters of letters, digits, '-', '_' and '.', starting and ending with a letter or digit", name)
	}
	return ""
}

// LabelValueError says why v is not a valid Kubernetes label value, or "".
func LabelValueError(v string) string {
	if v == "" {
		return ""
	}
	if len(v) > 63 || !labelName.MatchString(v) {
		return "a label value must be at most 63 characters of letters, digits, '-', '_' and '.', starting and ending with a letter or digit"
	}
	return ""
}

// NameRules checks the names, labels, taints and tags of cs against what
// Kubernetes, GKE and AWS accept; every finding is an error.
func NameRules(cs *spec.ClusterSpec) []Finding {
	s := &cs.Spec
	var out []Finding
	add := func(rule, path, msg, fix string, sources ...string) {
		out = append(out, Finding{Rule: rule, Severity: SeverityError, Message: msg, Fix: fix, Sources: sources, Path: path})
	}
	switch s.Provider {
	case spec.ProviderGKE:
		if s.ClusterName != "" && !gkeName.MatchString(s.ClusterName) {
			add(RuleSpecName, "spec.clusterName", fmt.Sprintf("GKE cluster name %q is invalid", s.ClusterName), "use 1-40 lowercase letters, digits and '-', starting with a letter", sourceGKEPool)
		}
	case spec.ProviderEKS:
		if s.ClusterName != "" && !eksCluster.MatchString(s.ClusterName) {
			add(RuleSpecName, "spec.clusterName", fmt.Sprintf("EKS cluster name %q is invalid", s.ClusterName), "use 1-100 letters, digits, '-' and '_', starting with a letter or digit", sourceEKSNames)
		}
	}
	for i, p := range s.NodePools {
		base := spec.PoolPath(i)
		// Pool names become GKE/EKS names, label values and Kueue object names.
		switch {
		case !dnsLabel.MatchString(p.Name) || len(p.Name) > 63:
			add(RuleSpecName, base+".name", fmt.Sprintf("node pool name %q is not a DNS label", p.Name), "use lowercase letters, digits and '-', at most 63 characters", sourceK8sNames)
		case s.Provider == spec.ProviderGKE && !gkeName.MatchString(p.Name):
			add(RuleSpecName, base+".name", fmt.Sprintf("GKE node pool name %q is invalid", p.Name), "use at most 40 lowercase letters, digits and '-', starting with a letter", sourceGKEPool)
		case s.Provider == spec.ProviderEKS && !eksName.MatchString(p.Name):
			add(RuleSpecName, base+".name", fmt.Sprintf("EKS node group name %q is invalid", p.Name), "use at most 63 letters, digits, '-' and '_'", sourceEKSNames)
		}
		for _, k := range sortedKeys(p.Labels) {
			path := base + ".labels" + spec.Key(k)
			if e := LabelKeyError(k); e != "" {
				add(RuleSpecLabel, path, fmt.Sprintf("label key %q: %s", k, e), "rename the label", sourceK8sLabels)
			} else if e := LabelValueError(p.Labels[k]); e != "" {
				add(RuleSpecLabel, path, fmt.Sprintf("label %s=%q: %s", k, p.Labels[k], e), "change the value", sourceK8sLabels)
			} else if strings.HasPrefix(k, "gpuctl.dev/") {
				add(RuleSpecLabel, path, fmt.Sprintf("label key %q is gpuctl's own", k), "remove it: gpuctl sets its labels itself", sourceK8sLabels)
			}
		}
		for j, t := range p.Taints {
			path := fmt.Sprintf("%s.taints[%d]", base, j)
			if e := LabelKeyError(t.Key); e != "" {
				add(RuleSpecTaint, path+".key", fmt.Sprintf("taint key %q: %s", t.Key, e), "fix the key", sourceK8sTaints)
			}
			if e := LabelValueError(t.Value); e != "" {
				add(RuleSpecTaint, path+".value", fmt.Sprintf("taint value %q: %s", t.Value, e), "fix the value", sourceK8sTaints)
			}
			switch t.Effect {
			case "NoSchedule", "PreferNoSchedule", "NoExecute":
			default:
				add(RuleSpecTaint, path+".effect", fmt.Sprintf("taint effect %q is not NoSchedule, PreferNoSchedule or NoExecute", t.Effect), "use one of the three effects", sourceK8sTaints)
			}
		}
		if p.SharingStrategy() == spec.SharingMIG && !migProfile.MatchString(p.GPU.Sharing.MIGProfile) {
			add(RuleSpecName, base+".gpu.sharing.migProfile", fmt.Sprintf("MIG profile %q is not of the form <N>g.<M>gb", p.GPU.Sharing.MIGProfile), "use a profile such as 1g.10gb", "https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html")
		}
		switch p.GPU.Sharing.MIGStrategy {
		case "", spec.MIGStrategySingle, spec.MIGStrategyMixed:
		default:
			add(RuleSpecName, base+".gpu.sharing.migStrategy", fmt.Sprintf("MIG strategy %q is not single or mixed", p.GPU.Sharing.MIGStrategy), "use single or mixed", "https://github.com/NVIDIA/k8s-device-plugin#configuration-option-details")
		}
	}
	for _, k := range sortedKeys(s.Tags) {
		v := s.Tags[k]
		path := "spec.tags" + spec.Key(k)
		switch s.Provider {
		case spec.ProviderGKE:
			if !gcpLabelKey.MatchString(k) || !utf8.ValidString(k) {
				add(RuleSpecTag, path, fmt.Sprintf("GCP label key %q is invalid", k), "use 1-63 lowercase letters, digits, '_' and '-', starting with a lowercase letter", sourceGCPLabels)
			} else if !gcpLabelValue.MatchString(v) {
				add(RuleSpecTag, path, fmt.Sprintf("GCP label value %q is invalid", v), "use at most 63 lowercase letters, digits, '_' and '-'", sourceGCPLabels)
			}
		case spec.ProviderEKS:
			switch {
			case k == "" || utf8.RuneCountInString(k) > 128 || !awsTagChars.MatchString(k):
				add(RuleSpecTag, path, fmt.Sprintf("AWS tag key %q is invalid", k), "use 1-128 letters, digits, spaces and _.:/=+-@", sourceAWSTags)
			case strings.HasPrefix(strings.ToLower(k), "aws:"):
				add(RuleSpecTag, path, fmt.Sprintf("AWS tag key %q uses the reserved aws: prefix", k), "drop the aws: prefix", sourceAWSTags)
			case utf8.RuneCountInString(v) > 256 || !awsTagChars.MatchString(v):
				add(RuleSpecTag, path, fmt.Sprintf("AWS tag value %q is invalid", v), "use at most 256 letters, digits, spaces and _.:/=+-@", sourceAWSTags)
			}
		}
	}
	for i, t := range s.Teams {
		if !dnsLabel.MatchString(t.Name) || len(t.Name) > 63 {
			add(RuleSpecName, fmt.Sprintf("spec.teams[%d].name", i), fmt.Sprintf("team name %q is not a DNS label (it names a namespace)", t.Name), "use lowercase letters, digits and '-', at most 63 characters", sourceK8sNames)
		}
	}
	if len(s.Teams) == 0 && s.Tags["team"] != "" && (!dnsLabel.MatchString(s.Tags["team"]) || len(s.Tags["team"]) > 63) {
		add(RuleSpecName, "spec.tags.team", fmt.Sprintf("tag team %q names the team namespace but is not a DNS label", s.Tags["team"]), "use lowercase letters, digits and '-', or list spec.teams", sourceK8sNames)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
