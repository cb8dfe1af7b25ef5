package spec

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/invopop/jsonschema"
)

// Rollout says how changes that replace a pool's nodes (driver,
// Kubernetes version, node image) are rolled through it: `gpuctl plan`
// builds its rollout plan from it.
type Rollout struct {
	// MaxUnavailable is the most nodes of the pool that may be out of
	// service at once during a rollout: a number of nodes (2) or a
	// percentage of the pool ("25%", rounded down, at least one node).
	// Unset: one node at a time.
	MaxUnavailable *IntOrPercent `yaml:"maxUnavailable,omitempty" json:"maxUnavailable,omitempty"`
	// Gate is what lets each step of a rollout go on: accept (the
	// default: the plan's step runs `gpuctl accept` of the step's nodes)
	// or sweep (the in-cluster acceptance sweep of spec.acceptance: the
	// step passes when every node of the step has the Node condition
	// GPUAccepted=True, set after the step started). sweep needs
	// spec.acceptance.
	Gate string `yaml:"gate,omitempty" json:"gate,omitempty" jsonschema:"enum=accept,enum=sweep" jsonschema_description:"What lets each rollout step go on: accept (gpuctl accept of the step's nodes; the default) or sweep (every node of the step has GPUAccepted=True from the acceptance sweep, newer than the step's start; needs spec.acceptance)."`
}

// Rollout gates (rollout.gate).
const (
	GateAccept = "accept"
	GateSweep  = "sweep"
)

// RolloutGate is the pool's rollout.gate, GateAccept when unset.
func (p *NodePool) RolloutGate() string {
	if p.Rollout == nil || p.Rollout.Gate == "" {
		return GateAccept
	}
	return p.Rollout.Gate
}

// IntOrPercent is a count (2) or a percentage ("25%"), as Kubernetes'
// maxUnavailable. Percent 1 to 100, counts at least 1.
type IntOrPercent struct {
	Value   int
	Percent bool
}

// ParseIntOrPercent reads "2" or "25%".
func ParseIntOrPercent(s string) (IntOrPercent, error) {
	s = strings.TrimSpace(s)
	pct := strings.HasSuffix(s, "%")
	n, err := strconv.Atoi(strings.TrimSuffix(s, "%"))
	switch {
	case err != nil:
		return IntOrPercent{}, fmt.Errorf("%q is neither a number of nodes (2) nor a percentage (\"25%%\")", s)
	case pct && (n < 1 || n > 100):
		return IntOrPercent{}, fmt.Errorf("percentage %q must be between 1%% and 100%%", s)
	case !pct && n < 1:
		return IntOrPercent{}, fmt.Errorf("%d nodes: must be at least 1", n)
	}
	return IntOrPercent{Value: n, Percent: pct}, nil
}

// String is "2" or "25%".
func (v IntOrPercent) String() string {
	if v.Percent {
		return strconv.Itoa(v.Value) + "%"
	}
	return strconv.Itoa(v.Value)
}

// Of returns the count for a pool of n nodes: a percentage rounded down,
// at least 1.
func (v IntOrPercent) Of(n int) int {
	c := v.Value
	if v.Percent {
		c = n * v.Value / 100
	}
	return max(c, 1)
}

// UnmarshalYAML reads 2, "2" or "25%" from the node goccy/go-yaml's
// decoder is at: a quoted value is read unescaped, as checkIntOrPercent
// read it. A spec's other values are refused before decoding, where they
// are written (checkIntOrPercent); an error here still carries the node's
// token, so that it is reported at its line and column.
func (v *IntOrPercent) UnmarshalYAML(n ast.Node) error {
	text := n.GetToken().Value
	switch x := n.(type) {
	case *ast.StringNode:
		text = x.Value
	case *ast.TagNode:
		text = x.String() // refused, with its tag
	}
	p, err := ParseIntOrPercent(text)
	if err != nil {
		return &nodeError{tk: n.GetToken(), msg: err.Error()}
	}
	*v = p
	return nil
}

// parseIntOrPercentText reads 2, "2", '2' or "25%" as JSON text.
func parseIntOrPercentText(b []byte) (IntOrPercent, error) {
	s := strings.TrimSpace(string(b))
	if u, err := strconv.Unquote(s); err == nil {
		s = u
	} else if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		s = s[1 : len(s)-1]
	}
	return ParseIntOrPercent(s)
}

// MarshalYAML writes a count as a number and a percentage as a string.
func (v IntOrPercent) MarshalYAML() (any, error) {
	if v.Percent {
		return v.String(), nil
	}
	return v.Value, nil
}

// MarshalJSON writes a count as a number and a percentage as a string.
func (v IntOrPercent) MarshalJSON() ([]byte, error) {
	if v.Percent {
		return json.Marshal(v.String())
	}
	return json.Marshal(v.Value)
}

// UnmarshalJSON reads 2 or "25%".
func (v *IntOrPercent) UnmarshalJSON(b []byte) error {
	p, err := parseIntOrPercentText(b)
	if err != nil {
		return err
	}
	*v = p
	return nil
}

// JSONSchema is an integer of at least 1 or a percentage string.
func (IntOrPercent) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{OneOf: []*jsonschema.Schema{
		{Type: "integer", Minimum: json.Number("1")},
		{Type: "string", Pattern: `^([1-9][0-9]?|100)%$`},
	}}
}
