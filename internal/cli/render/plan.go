package render

import (
	"fmt"
	"io"
	"strings"
)

// PlanView is the human form of `gpuctl plan`: tables (pools, spec
// changes, rollout steps, drift), then each changed file's marker line and
// unified diff, then one summary line.
type PlanView struct {
	Tables []Table
	Files  []PlanFile
	// Summary is the last line ("Plan: 1 to add, 2 to change, ...").
	Summary string
}

// PlanFile is one generated file that would change.
type PlanFile struct {
	// Marker is "+", "~" or "-".
	Marker string
	Path   string
	// Objects are the changed blocks/objects, each with its marker.
	Objects []string
	Diff    string
}

// PlanText writes v: tables (aligned on a terminal), the file changes as
// terraform plan lists them, the summary.
func PlanText(w io.Writer, tty bool, v PlanView) error {
	if err := Tables(w, tty, v.Tables...); err != nil {
		return err
	}
	var b strings.Builder
	if len(v.Files) > 0 {
		if len(v.Tables) > 0 {
			b.WriteString("\n")
		}
		for _, f := range v.Files {
			fmt.Fprintf(&b, "%s %s\n", f.Marker, f.Path)
			for _, o := range f.Objects {
				fmt.Fprintf(&b, "    %s\n", o)
			}
		}
		for _, f := range v.Files {
			b.WriteString("\n" + f.Diff)
		}
	}
	fmt.Fprintf(&b, "\n%s\n", v.Summary)
	_, err := io.WriteString(w, b.String())
	return err
}
