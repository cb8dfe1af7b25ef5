package render

import (
	"io"

	"sigs.k8s.io/yaml"
)

// YAML writes v as YAML with the same keys as its JSON.
func YAML(w io.Writer, v any) error {
	b, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
