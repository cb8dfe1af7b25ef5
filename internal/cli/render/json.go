package render

import (
	"encoding/json"
	"io"
)

// JSON writes v as indented JSON followed by a newline.
func JSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
