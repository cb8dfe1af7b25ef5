#!/usr/bin/env bash
# cyclo.sh - the complexity ceiling `make lint` holds (gocyclo, pinned as a tool in go.mod):
#   - no function (outside _test.go files) over MAX (40) cyclomatic complexity;
#   - a function over 15 only where hack/cyclo-allow.txt lists it (package, function, file) at that
#     complexity or more, at most LIMIT (60) entries: the list may only shrink;
#   - an entry whose function is gone or no longer over 15 must leave the list.
# Usage: hack/cyclo.sh           check
#        hack/cyclo.sh --write   rewrite the list from the tree (for a change that lowers it)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
MAX=40
LIMIT=60
ALLOW=hack/cyclo-allow.txt
# gocyclo prints "COMPLEXITY PACKAGE FUNCTION FILE:LINE:COL"; the list keeps no positions.
# gocyclo exits 1 when it lists a function; anything on its stderr is a real failure.
errs=$(mktemp); trap 'rm -f "$errs"' EXIT
raw=$(go tool gocyclo -over 15 -ignore '_test\.go$' . 2>"$errs") || true
if [[ -s $errs ]]; then echo "cyclo: gocyclo failed:" >&2; cat "$errs" >&2; exit 1; fi
now=$(awk 'NF == 4 { sub(/:[0-9]+:[0-9]+$/, "", $4); print $1, $2, $3, $4 }' <<<"$raw" | sort -k4,4 -k3,3)
if [[ ${1:-} == --write ]]; then
  {
    echo "# Functions over cyclomatic complexity 15 (gocyclo; _test.go files not counted) that may stay, at"
    echo "# most at the complexity given. hack/cyclo.sh (make lint) fails on a function over 15 that is not"
    echo "# here, one that grew, and an entry that is no longer over 15. The list may only shrink."
    echo "# complexity package function file"
    echo "$now"
  } > "$ALLOW"
  echo "cyclo: wrote $(grep -vc '^#' "$ALLOW") entries to $ALLOW"
  exit 0
fi
[[ -f $ALLOW ]] || { echo "cyclo: $ALLOW is missing (hack/cyclo.sh --write creates it)" >&2; exit 1; }
awk -v max="$MAX" -v limit="$LIMIT" -v allow="$ALLOW" '
  FNR == NR { if ($0 !~ /^#/ && NF == 4) { key = $2 " " $3 " " $4; allowed[key] = $1; n++ } next }
  NF != 4 { next }
  {
    key = $2 " " $3 " " $4; seen[key] = 1
    if ($1 > max) { printf "cyclo: %s %s (%s) has complexity %d, over the ceiling %d: split it\n", $2, $3, $4, $1, max; bad = 1 }
    else if (!(key in allowed)) { printf "cyclo: %s %s (%s) has complexity %d, over 15 and not in %s: split it\n", $2, $3, $4, $1, allow; bad = 1 }
    else if ($1 > allowed[key]) { printf "cyclo: %s %s (%s) grew from %d to %d: split it\n", $2, $3, $4, allowed[key], $1; bad = 1 }
  }
  END {
    for (k in allowed) if (!(k in seen)) { printf "cyclo: %s is no longer over 15: remove it from %s\n", k, allow; bad = 1 }
    if (n > limit) { printf "cyclo: %s lists %d functions; at most %d\n", allow, n, limit; bad = 1 }
    if (!bad) printf "cyclo: %d functions over 15 (at most %d), none over %d\n", length(seen), limit, max
    exit bad
  }' "$ALLOW" <(echo "$now")
