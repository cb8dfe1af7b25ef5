// Package matrix holds gpuctl's version and compatibility facts (embedded,
// each with its source URL and as_of date) and the rules that turn a
// resolved cluster spec into findings ([diag.Finding]). It is pure: no I/O
// beyond its embedded data.
package matrix
