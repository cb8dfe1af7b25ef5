package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"reflect"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/gpuctl/gpuctl/internal/safefs"
)

// HintCheckPath is the hint of a file that does not exist, in every
// command's message for one: "FILE: ... no such file or directory (check
// the path)".
const HintCheckPath = "check the path"

// readInput reads the file at path through safefs (a regular file only,
// refused by its mode before it is opened, read through kind's cap), or in
// when path is "-". what names the file in messages ("spec"). Errors are
// *Error values naming the path, wrapping safefs's error.
func readInput(path string, in io.Reader, kind safefs.Kind, what string) ([]byte, error) {
	var data []byte
	var err error
	if path == "-" {
		if in == nil {
			in = bytes.NewReader(nil)
		}
		data, err = safefs.ReadReader(in, path, kind)
	} else {
		data, err = safefs.ReadFile(path, kind)
	}
	if err == nil {
		return data, nil
	}
	e := &Error{File: path, Message: "cannot read " + what + ": " + reason(err), Err: err}
	switch {
	case errors.Is(err, safefs.ErrTooLarge):
		e.Message = reason(err)
		e.Hint = fmt.Sprintf("a %s is a few KiB; is this the right file?", what)
	case errors.Is(err, fs.ErrNotExist):
		e.Hint = HintCheckPath
	}
	return nil, e
}

// reason is err's message without the path safefs puts first.
func reason(err error) string {
	var se *safefs.Error
	if errors.As(err, &se) {
		return strings.TrimPrefix(se.Error(), se.Path+": ")
	}
	return err.Error()
}

// parseList reads data, a waivers or policy file named file, into v (a
// pointer to WaiverFile or PolicyFile) the way a spec is read: the prescan
// under ListLimits, one document, aliases expanded within the limits, no
// tags or control characters, known fields of the right types, then the
// decoder on the tree already parsed. what names the file ("policy file")
// and empty is the hint for an empty one. It returns the document's body,
// for positions.
func parseList(file string, data []byte, v any, what, empty string) (ast.Node, error) {
	data = bytes.TrimPrefix(data, bom)
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &Error{File: file, Message: what + " is empty", Hint: empty}
	}
	aliases, err := prescanWith(file, data, ListLimits)
	if err != nil {
		return nil, err
	}
	body, err := parseBody(file, data)
	if err != nil {
		var se *Error
		if errors.As(err, &se) && se.Message == "file holds no YAML document" {
			se.Message, se.Hint = what+" is empty", empty
		}
		return nil, err
	}
	if n, ok := expandedSizeWith(body, map[string]ast.Node{}, 0, ListLimits); aliases && (!ok || n > ListLimits.Nodes) {
		return nil, errAt(file, body.GetToken(), "", fmt.Sprintf("YAML aliases expand to more than %d nodes or %d levels", ListLimits.Nodes, 4*ListLimits.Depth), "write the values out instead of nesting anchors and aliases")
	}
	if err := checkText(file, body); err != nil {
		return nil, err
	}
	if err := checkFields(file, body, reflect.TypeOf(v).Elem(), "", map[string]ast.Node{}); err != nil {
		return nil, err
	}
	if err := decodeSpec(file, body, v); err != nil {
		return nil, err
	}
	return body, nil
}
