package plan

import (
	"fmt"
	"strings"
)

// maxDiffCells bounds the line-matching table of UnifiedDiff; larger pairs
// of files are shown as replaced whole.
const maxDiffCells = 16 << 20

// UnifiedDiff returns the unified diff (3 lines of context) from a to b,
// "" when they are equal. An empty side is /dev/null.
func UnifiedDiff(aName, bName, a, b string) string {
	if a == b {
		return ""
	}
	al, bl := lines(a), lines(b)
	if a == "" {
		aName = "/dev/null"
	}
	if b == "" {
		bName = "/dev/null"
	}
	ops := diffLines(al, bl)
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", aName, bName)
	const ctx = 3
	// Group the edit script into hunks.
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-ctx, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*ctx {
				end = min(end+ctx, len(ops))
				break
			}
			end = run
		}
		aStart, bStart := ops[start].a, ops[start].b
		var aN, bN int
		var body strings.Builder
		for _, op := range ops[start:end] {
			switch op.kind {
			case ' ':
				aN++
				bN++
				body.WriteString(" " + al[op.a] + "\n")
			case '-':
				aN++
				body.WriteString("-" + al[op.a] + "\n")
			case '+':
				bN++
				body.WriteString("+" + bl[op.b] + "\n")
			}
		}
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n%s", hunkRange(aStart, aN), hunkRange(bStart, bN), body.String())
		i = end
	}
	return sb.String()
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// op is one line of the edit script: ' ' both (a and b indexes), '-' only
// in a, '+' only in b. a and b are the positions reached in each file.
type op struct {
	kind byte
	a, b int
}

// diffLines is a longest-common-subsequence edit script.
func diffLines(a, b []string) []op {
	// Common prefix and suffix first: generated files change in places.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	var ops []op
	for i := 0; i < pre; i++ {
		ops = append(ops, op{' ', i, i})
	}
	n, m := len(ma), len(mb)
	if (n+1)*(m+1) > maxDiffCells {
		for i := range ma {
			ops = append(ops, op{'-', pre + i, pre})
		}
		for j := range mb {
			ops = append(ops, op{'+', pre + n, pre + j})
		}
	} else {
		// lcs[i][j] is the LCS length of ma[i:] and mb[j:].
		lcs := make([][]int32, n+1)
		for i := range lcs {
			lcs[i] = make([]int32, m+1)
		}
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n || j < m {
			switch {
			case i < n && j < m && ma[i] == mb[j]:
				ops = append(ops, op{' ', pre + i, pre + j})
				i++
				j++
			case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
				// Removals before additions, as git and diff -u show them.
				ops = append(ops, op{'-', pre + i, pre + j})
				i++
			default:
				ops = append(ops, op{'+', pre + i, pre + j})
				j++
			}
		}
	}
	for k := 0; k < suf; k++ {
		ops = append(ops, op{' ', len(a) - suf + k, len(b) - suf + k})
	}
	return ops
}
