package spec

import (
	"bytes"
	"fmt"
	"os"
	"reflect"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// WaiverFile is the shape of a --waivers file: `waivers: [{rule, path,
// reason, expires}]`.
type WaiverFile struct {
	Waivers []Waiver `yaml:"waivers" json:"waivers"`
}

// WaiverSet is a decoded --waivers file.
type WaiverSet struct {
	File    string
	Waivers []Waiver
	doc     *Document
}

// Position returns the 1-based line and column of a path in the waivers
// file, such as "waivers[1]" (see Document.Position).
func (w *WaiverSet) Position(path string) (line, column int) {
	l, c, _ := w.doc.Position(path)
	return l, c
}

// LoadWaivers strictly reads a waivers file. Errors are *Error values with
// file:line:column, or I/O errors.
func LoadWaivers(path string) (*WaiverSet, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Message: fmt.Sprintf("cannot read waivers: %v", err)}
	}
	if len(data) > MaxFileBytes {
		return nil, &Error{File: path, Message: "waivers file is too large"}
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, yamlError(path, err)
	}
	if len(f.Docs) == 0 || f.Docs[0] == nil || f.Docs[0].Body == nil {
		return nil, &Error{File: path, Message: "waivers file is empty", Hint: "write `waivers: [{rule: ..., path: ..., reason: ..., expires: YYYY-MM-DD}]`"}
	}
	body := f.Docs[0].Body
	if n, ok := expandedSize(body, map[string]ast.Node{}, 0); !ok || n > maxExpandedNodes {
		return nil, errAt(path, body.GetToken(), "", "YAML aliases expand to too many nodes", "")
	}
	if err := checkFields(path, body, reflect.TypeOf(WaiverFile{}), "", map[string]ast.Node{}); err != nil {
		return nil, err
	}
	var wf WaiverFile
	if err := yaml.NewDecoder(bytes.NewReader(data), yaml.DisallowUnknownField()).Decode(&wf); err != nil {
		return nil, yamlError(path, err)
	}
	return &WaiverSet{File: path, Waivers: wf.Waivers, doc: &Document{File: path, index: buildIndex(body)}}, nil
}
