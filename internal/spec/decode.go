package spec

import (
	"fmt"
	"reflect"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// The spec's values are decoded from the tree the parser built, by
// goccy/go-yaml's own decoder. checkFields has walked the tree first, so
// unknown fields (with "did you mean"), numbers in integer and string
// fields and bad rollout values are already refused where they are
// written; what the decoder still refuses (a wrong shape, a repeated key
// through a merge key, an unknown alias) carries the token it stopped at.

var (
	intOrPercentType = reflect.TypeOf(IntOrPercent{})
	stringMapType    = reflect.TypeOf(map[string]string(nil))
)

// decodeSpec decodes the document body into v (a pointer to the spec's
// type). An error is an *Error at the line and column of the node the
// decoder stopped at, with the field path written there.
func decodeSpec(file string, body ast.Node, v any) error {
	err := libraryDecode(body, v)
	if err == nil {
		return nil
	}
	e := yamlError(file, err)
	if se, ok := e.(*Error); ok && se.Line > 0 {
		se.Path = pathAt(body, se.Line, se.Column)
	}
	return e
}

// libraryDecode is yaml.NodeToValue, with a panic in the library (it has
// dereferenced nil on shapes checkFields does not know of) returned as an
// error.
func libraryDecode(body ast.Node, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the YAML library cannot decode this file (%v); write it without YAML tags and merge keys", r)
		}
	}()
	return yaml.NodeToValue(body, v, yaml.DisallowUnknownField())
}

// nodeError is an error of a value's own decoding (IntOrPercent's) at the
// token of its node: a yaml.Error, so that yamlError places it.
type nodeError struct {
	tk  *token.Token
	msg string
}

func (e *nodeError) Error() string                 { return e.msg }
func (e *nodeError) GetMessage() string            { return e.msg }
func (e *nodeError) GetToken() *token.Token        { return e.tk }
func (e *nodeError) FormatError(bool, bool) string { return e.msg }
