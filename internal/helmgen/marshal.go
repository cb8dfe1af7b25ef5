package helmgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	yamlv2 "go.yaml.in/yaml/v2"
)

// marshalYAML writes o as sigs.k8s.io/yaml.Marshal does (encoding/json,
// then go.yaml.in/yaml/v2 from the JSON's generic value, keys sorted), with
// the same bytes, but reads the JSON back with encoding/json instead of the
// YAML parser: that parse was the larger half of writing the Kueue objects
// of 1,000 pools. Numbers become what the YAML parser makes of a JSON
// number (int, else uint64, else float64). TestMarshalYAML holds it to
// sigs.k8s.io/yaml on every generated object and on hostile values.
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
	return yamlv2.Marshal(yamlNumbers(v))
}

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
