package helmgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	yamlv2 "sigs.k8s.io/yaml/goyaml.v2"
)

// marshalYAML writes o as sigs.k8s.io/yaml.Marshal does (encoding/json,
// then go.yaml.in/yaml/v2 from the JSON's generic value, keys sorted), with
// the same bytes, but reads the JSON back with encoding/json instead of the
// YAML parser: that parse was the larger half of writing the Kueue objects
// of 1,000 pools. Numbers become what the YAML parser makes of a JSON
// number (int, else uint64, else float64). TestMarshalYAML holds it to
// sigs.k8s.io/yaml on every generated object and on hostile values. What
// emitPlain does not write, sigs.k8s.io/yaml's goyaml.v2 (yaml/v2 as
// sigs.k8s.io/yaml links it) writes.
func marshalYAML(o any) ([]byte, error) {
	j, err := json.Marshal(o)
	if err != nil {
		return nil, fmt.Errorf("error marshaling into JSON: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	v = yamlNumbers(v)
	if out, ok := emitPlain(v); ok {
		return out, nil
	}
	return yamlv2.Marshal(v)
}

// emitPlain writes v as go.yaml.in/yaml/v2 writes it (block style, two
// spaces of indent, lists in a mapping not indented, keys sorted), for the
// values most objects are made of: mappings of plain keys, lists of
// scalars and mappings, strings that YAML reads as strings without quotes
// (a letter, then letters, digits and ._/-; a number then letters, as
// "64Gi") or as numbers unless quoted (digits: written in double quotes),
// integers, booleans and null. It
// returns false for anything else (then yaml/v2 writes the object): its
// emitter was most of writing the Kueue objects of 1,000 pools.
// TestMarshalYAML and TestEmitPlain hold it to yaml/v2.
func emitPlain(v any) ([]byte, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	if len(m) == 0 {
		return []byte("{}\n"), true
	}
	e := &plainEmitter{out: make([]byte, 0, 512)}
	if !e.mapping(m, 0, false) {
		return nil, false
	}
	return e.out, true
}

type plainEmitter struct {
	out  []byte
	keys []string
}

// mapping writes m's entries at indent; inline: the first key follows a
// "- " already written.
func (e *plainEmitter) mapping(m map[string]any, indent int, inline bool) bool {
	start := len(e.keys)
	for k := range m {
		// Keys of letters and ./- only: yaml/v2 orders keys "naturally"
		// (digit runs by their number, letters after other runes), which
		// for these is their byte order.
		if !plainKey(k) {
			e.keys = e.keys[:start]
			return false
		}
		e.keys = append(e.keys, k)
	}
	keys := e.keys[start:]
	sort.Strings(keys)
	for i, k := range keys {
		if i > 0 || !inline {
			e.spaces(indent)
		}
		e.out = append(e.out, k...)
		e.out = append(e.out, ':')
		if !e.value(m[k], indent, true) {
			e.keys = e.keys[:start]
			return false
		}
	}
	e.keys = e.keys[:start]
	return true
}

// value writes v after "key:" (inMapping) or "- ".
func (e *plainEmitter) value(v any, indent int, inMapping bool) bool {
	sep := func() {
		if inMapping {
			e.out = append(e.out, ' ')
		}
	}
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			sep()
			e.out = append(e.out, "{}\n"...)
			return true
		}
		if inMapping {
			e.out = append(e.out, '\n')
			return e.mapping(x, indent+2, false)
		}
		return e.mapping(x, indent+2, true)
	case []any:
		if len(x) == 0 {
			sep()
			e.out = append(e.out, "[]\n"...)
			return true
		}
		if !inMapping {
			return false // a list in a list
		}
		e.out = append(e.out, '\n')
		for _, it := range x {
			e.spaces(indent)
			e.out = append(e.out, "- "...)
			if !e.value(it, indent, false) {
				return false
			}
		}
		return true
	}
	sep()
	if !e.scalar(v) {
		return false
	}
	e.out = append(e.out, '\n')
	return true
}

func (e *plainEmitter) scalar(v any) bool {
	switch x := v.(type) {
	case string:
		switch {
		case plainString(x), quantity(x):
			e.out = append(e.out, x...)
		case digits(x):
			e.out = append(e.out, '"')
			e.out = append(e.out, x...)
			e.out = append(e.out, '"')
		default:
			return false
		}
	case bool:
		e.out = strconv.AppendBool(e.out, x)
	case int:
		e.out = strconv.AppendInt(e.out, int64(x), 10)
	case int64:
		e.out = strconv.AppendInt(e.out, x, 10)
	case uint64:
		e.out = strconv.AppendUint(e.out, x, 10)
	case nil:
		e.out = append(e.out, "null"...)
	default:
		return false
	}
	return true
}

func (e *plainEmitter) spaces(n int) {
	for ; n > 0; n-- {
		e.out = append(e.out, ' ')
	}
}

// plainString reports whether yaml/v2 writes s as it is: it starts with a
// letter, holds only letters, digits and ._/-, and is not one of the words
// YAML 1.1 reads as a boolean or null (in any case, to be safe).
func plainString(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isLetter(c) && !(c >= '0' && c <= '9') && c != '.' && c != '_' && c != '/' && c != '-' {
			return false
		}
	}
	switch strings.ToLower(s) {
	case "y", "yes", "n", "no", "on", "off", "true", "false", "null":
		return false
	}
	return true
}

// plainKey is a plainString of letters and ./- only, at most 128 bytes
// (yaml/v2 writes a longer key as a complex key).
func plainKey(s string) bool {
	if len(s) > 128 || !plainString(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c >= '0' && c <= '9') || c == '_' {
			return false
		}
	}
	return true
}

// digits reports whether s is a decimal number without a leading zero,
// which yaml/v2 writes in double quotes (unquoted it would be read as an
// integer).
func digits(s string) bool {
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// quantity reports whether s is a number without a leading zero followed
// by letters ("1M", "64Gi"), which YAML reads as a string: yaml/v2 writes
// it as it is.
func quantity(s string) bool {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || i == len(s) || s[0] == '0' {
		return false
	}
	for ; i < len(s); i++ {
		if !isLetter(s[i]) {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// yamlNumbers replaces the json.Number values in v, in place where it can.
func yamlNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if n, ok := e.(json.Number); ok {
				x[k] = yamlNumber(n)
			} else if _, ok := e.(string); !ok {
				x[k] = yamlNumbers(e)
			}
		}
	case []any:
		for i, e := range x {
			x[i] = yamlNumbers(e)
		}
	case json.Number:
		return yamlNumber(x)
	}
	return v
}

// yamlNumber is what go.yaml.in/yaml/v2 resolves a JSON number to.
func yamlNumber(n json.Number) any {
	s := string(n)
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		if i == int64(int(i)) {
			return int(i)
		}
		return i
	}
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return u
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f
	}
	return s
}
