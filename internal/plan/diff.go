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
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", aName, bName)
	if len(al)+len(bl) > MaxDiffLines {
		// a file of the tree this large is not gpuctl's (a pull request's);
		// its lines are not compared, nor shown
		fmt.Fprintf(&sb, "@@ -1,%d +1,%d @@ (not shown: more than %d lines)\n", len(al), len(bl), MaxDiffLines)
		return sb.String()
	}
	ops := diffLines(al, bl)
	// Group the edit script into hunks.
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start, end := max(i-diffContext, 0), hunkEnd(ops, i)
		writeHunk(&sb, ops[start:end], al, bl)
		i = end
	}
	return sb.String()
}

// MaxDiffLines is the most lines (both versions together) UnifiedDiff
// compares; gpuctl's largest file (1,000 pools) has about 40,000.
const MaxDiffLines = 200_000

// diffContext is the lines of context around each change.
const diffContext = 3

// hunkEnd is where the hunk whose first change is ops[i] ends: after the
// context that follows its last change, where the next change is more
// than twice the context away (or the script ends).
func hunkEnd(ops []op, i int) int {
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
		if run == len(ops) || run-end > 2*diffContext {
			return min(end+diffContext, len(ops))
		}
		end = run
	}
	return end
}

// writeHunk writes the hunk of ops (lines of al and bl) with its header.
func writeHunk(sb *strings.Builder, ops []op, al, bl []string) {
	var aN, bN int
	var body strings.Builder
	for _, op := range ops {
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
	fmt.Fprintf(sb, "@@ -%s +%s @@\n%s", hunkRange(ops[0].a, aN), hunkRange(ops[0].b, bN), body.String())
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
	if (len(ma)+1)*(len(mb)+1) > maxDiffCells {
		ops = replaceOps(ops, len(ma), len(mb), pre)
	} else {
		ops = lcsOps(ops, ma, mb, pre)
	}
	for k := 0; k < suf; k++ {
		ops = append(ops, op{' ', len(a) - suf + k, len(b) - suf + k})
	}
	return ops
}

// replaceOps appends the script that removes n lines and adds m, the
// middles of files too large to match (from line pre on).
func replaceOps(ops []op, n, m, pre int) []op {
	for i := 0; i < n; i++ {
		ops = append(ops, op{'-', pre + i, pre})
	}
	for j := 0; j < m; j++ {
		ops = append(ops, op{'+', pre + n, pre + j})
	}
	return ops
}

// lcsOps appends the longest-common-subsequence script from ma to mb, the
// middles of the files (from line pre on); removals come before additions,
// as git and diff -u show them.
func lcsOps(ops []op, ma, mb []string, pre int) []op {
	n, m := len(ma), len(mb)
	lcs := lcsTable(ma, mb)
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && ma[i] == mb[j]:
			ops = append(ops, op{' ', pre + i, pre + j})
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', pre + i, pre + j})
			i++
		default:
			ops = append(ops, op{'+', pre + i, pre + j})
			j++
		}
	}
	return ops
}

// lcsTable: lcs[i][j] is the LCS length of ma[i:] and mb[j:].
func lcsTable(ma, mb []string) [][]int32 {
	n, m := len(ma), len(mb)
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
	return lcs
}
