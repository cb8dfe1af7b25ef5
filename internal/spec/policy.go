package spec

import (
	"fmt"
	"strings"

	"github.com/gpuctl/gpuctl/internal/safefs"
)

// PolicyFile is the shape of a --policy file: `policy: {...}`, the same
// fields as spec.policy.
type PolicyFile struct {
	Policy Policy `yaml:"policy" json:"policy"`
}

// PolicySet is a decoded --policy file: the organisation's default policy.
type PolicySet struct {
	File   string
	Policy *Policy
}

// LoadPolicy strictly reads a policy file: through safefs (a regular file
// only, at most safefs.Policy's cap, 1 MiB), under ListLimits (one
// document), without YAML tags or control characters. Errors are *Error
// values with file:line:column (an unknown field, a wrong type, a share
// outside 0-1, a taint that is not key[=value]:effect), or naming the path
// of a file that cannot be read.
func LoadPolicy(path string) (*PolicySet, error) {
	data, err := readInput(path, nil, safefs.Policy, "policy file")
	if err != nil {
		return nil, err
	}
	var pf PolicyFile
	body, err := parseList(path, data, &pf, "policy file", "write `policy: {requiredTags: [...], maxSpotShare: 0.5, trainingUpgradeHold: true, requiredTaints: [...]}`")
	if err != nil {
		return nil, err
	}
	doc := &Document{File: path, index: buildIndex(body)}
	if err := doc.checkPolicy("policy", &pf.Policy); err != nil {
		return nil, err
	}
	return &PolicySet{File: path, Policy: &pf.Policy}, nil
}

// checkPolicy holds a policy's values to their ranges and syntax; path is
// where the policy is written ("spec.policy", "policy").
func (d *Document) checkPolicy(path string, p *Policy) error {
	if p == nil {
		return nil
	}
	if s := p.MaxSpotShare; s != nil && (*s < 0 || *s > 1) {
		return d.errorAt(path+".maxSpotShare", fmt.Sprintf("maxSpotShare %g is not a share between 0 and 1", *s), "write e.g. 0.5 for at most half of the GPU capacity on spot")
	}
	for i, k := range p.RequiredTags {
		if strings.TrimSpace(k) == "" {
			return d.errorAt(fmt.Sprintf("%s.requiredTags[%d]", path, i), "requiredTags has an empty key", "list tag keys, e.g. [cost-center, team]")
		}
	}
	for i, s := range p.RequiredTaints {
		if _, err := ParseTaint(s); err != nil {
			return d.errorAt(fmt.Sprintf("%s.requiredTaints[%d]", path, i), err.Error(), "write key[=value]:effect, e.g. nvidia.com/gpu=present:NoSchedule")
		}
	}
	return nil
}

// ParseTaint reads a taint written key[=value]:effect (kubectl's form),
// effect one of NoSchedule, PreferNoSchedule, NoExecute.
func ParseTaint(s string) (Taint, error) {
	kv, effect, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok || strings.Contains(effect, ":") {
		return Taint{}, fmt.Errorf("taint %q is not key[=value]:effect", s)
	}
	switch effect {
	case "NoSchedule", "PreferNoSchedule", "NoExecute":
	default:
		return Taint{}, fmt.Errorf("taint %q: effect %q is not one of NoSchedule, PreferNoSchedule, NoExecute", s, effect)
	}
	key, value, _ := strings.Cut(kv, "=")
	if key == "" || strings.Contains(value, "=") {
		return Taint{}, fmt.Errorf("taint %q is not key[=value]:effect", s)
	}
	return Taint{Key: key, Value: value, Effect: effect}, nil
}

// MergePolicy returns the policy in force when own (spec.policy, or an
// environment's resolved policy) overrides org (a --policy file) field by
// field: a field own sets replaces org's, lists included. Nil when both
// are nil.
func MergePolicy(org, own *Policy) *Policy {
	if org == nil && own == nil {
		return nil
	}
	out := Policy{}
	if org != nil {
		out = *org
	}
	if own != nil {
		if own.RequiredTags != nil {
			out.RequiredTags = own.RequiredTags
		}
		if own.MaxSpotShare != nil {
			out.MaxSpotShare = own.MaxSpotShare
		}
		if own.TrainingUpgradeHold != nil {
			out.TrainingUpgradeHold = own.TrainingUpgradeHold
		}
		if own.RequiredTaints != nil {
			out.RequiredTaints = own.RequiredTaints
		}
	}
	return &out
}
