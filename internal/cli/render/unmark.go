package render

import (
	"fmt"
	"io"
	"strings"
)

// AcceptUnmarked is one node of `gpuctl accept --unmark -o json` (a JSON
// list of them): what was removed from the node (with dryRun, what would
// be), what stays because gpuctl did not add it, the Event, and the API
// errors met ([] for none).
type AcceptUnmarked struct {
	Node string `json:"node"`
	// Removed names each thing: "label KEY", "annotation KEY", "taint
	// gpuctl.dev/unaccepted", "cordon", "condition GPUAccepted"; [] when
	// the node carried nothing of gpuctl's.
	Removed []string `json:"removed"`
	// Kept are the taint gpuctl.dev/unaccepted and the cordon where gpuctl
	// did not add them.
	Kept   []string `json:"kept,omitempty"`
	Event  string   `json:"event,omitempty"`
	DryRun bool     `json:"dryRun,omitempty"`
	Errors []string `json:"errors"`
}

// AcceptUnmarkedText writes one line per node: what was (or would be)
// removed, what was kept, and the errors.
func AcceptUnmarkedText(w io.Writer, nodes []AcceptUnmarked) error {
	for _, n := range nodes {
		if _, err := fmt.Fprintln(w, unmarkedLine(n)); err != nil {
			return err
		}
		for _, e := range n.Errors {
			if _, err := fmt.Fprintln(w, "  error: "+oneLine(e)); err != nil {
				return err
			}
		}
	}
	return nil
}

func unmarkedLine(n AcceptUnmarked) string {
	verb := "removed"
	if n.DryRun {
		verb = "would remove"
	}
	line := "node " + n.Node + ": "
	switch {
	case len(n.Removed) > 0:
		line += verb + " " + strings.Join(n.Removed, ", ")
	case len(n.Errors) > 0:
		line += "nothing removed"
	default:
		line += "nothing of gpuctl's to remove"
	}
	if len(n.Kept) > 0 {
		line += "; kept (gpuctl did not add it): " + strings.Join(n.Kept, ", ")
	}
	if n.Event != "" {
		line += "; Event " + n.Event
	}
	return line
}
