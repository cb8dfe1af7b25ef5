package spec

import "github.com/gpuctl/gpuctl/internal/safefs"

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

// LoadWaivers strictly reads a waivers file: through safefs (a regular file
// only, at most safefs.Waivers's cap, 1 MiB), under ListLimits (one
// document), without YAML tags or control characters. Errors are *Error
// values with file:line:column, or naming the path of a file that cannot be
// read.
func LoadWaivers(path string) (*WaiverSet, error) {
	data, err := readInput(path, nil, safefs.Waivers, "waivers file")
	if err != nil {
		return nil, err
	}
	var wf WaiverFile
	body, err := parseList(path, data, &wf, "waivers file", "write `waivers: [{rule: ..., path: ..., reason: ..., expires: YYYY-MM-DD}]`")
	if err != nil {
		return nil, err
	}
	return &WaiverSet{File: path, Waivers: wf.Waivers, doc: &Document{File: path, index: buildIndex(body)}}, nil
}
