// Command genhostile writes one of the hostile spec files bench/hostile.sh
// measures to stdout: the shapes that once exhausted the machine (deep
// nesting, wide mappings, huge strings, many nodes) and the largest file
// the limits still hand to the YAML library.
//
//	go run ./bench/genhostile -list
//	go run ./bench/genhostile flow-seq-100000 > h.yaml
package main

import (
	"fmt"
	"os"
	"sort"
	"strings"
)

const header = "apiVersion: gpuctl.dev/v1alpha1\nkind: ClusterSpec\nmetadata: {name: hostile}\n"

var cases = map[string]func() string{
	// 100,000 nested flow sequences (once 30 minutes and 11.7 GB).
	"flow-seq-100000": func() string {
		return header + "spec: {zones: " + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + "}\n"
	},
	// 50,000 nested flow mappings (once 30 minutes and 3.8 GB).
	"flow-map-50000": func() string {
		return header + "spec: " + strings.Repeat("{a: ", 50_000) + "1" + strings.Repeat("}", 50_000) + "\n"
	},
	// 1,000 nested block mappings (deeper ones pass the byte limit first:
	// the indentation grows with the square of the depth).
	"block-maps-1000": func() string {
		var b strings.Builder
		b.WriteString(header + "spec:\n")
		for i := 0; i < 1000; i++ {
			b.WriteString(strings.Repeat(" ", 2*i+2) + "a:\n")
		}
		return b.String()
	},
	// 10,000 labels in one mapping.
	"labels-10000": func() string {
		var b strings.Builder
		b.WriteString(header + "spec:\n  tags:\n")
		for i := 0; i < 10_000; i++ {
			fmt.Fprintf(&b, "    k%d: v\n", i)
		}
		return b.String()
	},
	// 5,000 environments.
	"environments-5000": func() string {
		var b strings.Builder
		b.WriteString(header + "spec:\n  environments: {")
		for i := 0; i < 5000; i++ {
			fmt.Fprintf(&b, "e%d: {region: x}, ", i)
		}
		b.WriteString("}\n")
		return b.String()
	},
	// A 1 MiB string.
	"string-1MiB": func() string {
		return header + "spec:\n  region: " + strings.Repeat("x", 1<<20) + "\n"
	},
	// 2,000,000 nodes in one flow list (over the node limit).
	"nodes-2000000": func() string {
		return header + "spec: {zones: [" + strings.Repeat("a,", 2_000_000) + "]}\n"
	},
	// 450,000 nodes in one flow list: under every limit, so the YAML
	// library builds the whole tree before the unknown field is refused;
	// the costliest file per byte the limits admit.
	"nodes-450000": func() string {
		return header + "spec: {zones: [" + strings.Repeat("a,", 450_000) + "]}\n"
	},
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: genhostile NAME | -list")
		os.Exit(2)
	}
	if os.Args[1] == "-list" {
		names := make([]string, 0, len(cases))
		for n := range cases {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Println(strings.Join(names, "\n"))
		return
	}
	gen, ok := cases[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "genhostile: no case %q (see -list)\n", os.Args[1])
		os.Exit(2)
	}
	os.Stdout.WriteString(gen())
}
