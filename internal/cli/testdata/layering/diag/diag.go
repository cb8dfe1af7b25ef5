// Package diag is clean: the layering check must report nothing here.
package diag

import "fmt"

// Finding formats without printing, as every package below cli does.
type Finding struct{ Rule string }

func (f Finding) String() string { return fmt.Sprintf("%s", f.Rule) }
