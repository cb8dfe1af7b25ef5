#!/usr/bin/env bash
# Hostile inputs: CPU time (user + system), wall time, peak RSS and exit
# code of `gpuctl validate` and `gpuctl generate all --out` on each case of
# bench/genhostile, measured with GNU time. Each must exit 2 (a spec error)
# within 2 s and 200 MB; rows over either are marked OVER.
#   bench/hostile.sh            # every case; CASES="a b" for some
set -euo pipefail
cd "$(dirname "$0")/.."
TIME=${TIME:-/usr/bin/time}
[ -x "$TIME" ] || { echo "bench/hostile.sh: needs GNU time at $TIME" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -trimpath -o "$tmp/gpuctl" ./cmd/gpuctl
CGO_ENABLED=0 go build -o "$tmp/genhostile" ./bench/genhostile
echo "| case | KiB | command | exit | CPU s | wall s | peak MiB | budget |"
echo "|---|---:|---|---:|---:|---:|---:|---|"
for c in ${CASES:-$("$tmp/genhostile" -list)}; do
	"$tmp/genhostile" "$c" > "$tmp/h.yaml"
	for cmd in validate "generate all"; do
		rm -rf "$tmp/out"
		args=(validate)
		[ "$cmd" = validate ] || args=(generate all --out "$tmp/out")
		set +e
		"$TIME" -f '%U %S %e %M' -o "$tmp/t" "$tmp/gpuctl" "${args[@]}" --as-of 2026-11-29 "$tmp/h.yaml" >/dev/null 2>&1
		code=$?
		set -e
		read -r u s e m < <(tail -1 "$tmp/t")
		awk -v c="$c" -v k=$(( $(wc -c < "$tmp/h.yaml") / 1024 )) -v cmd="$cmd" -v code="$code" -v u="$u" -v s="$s" -v e="$e" -v m="$m" 'BEGIN {
			over = (e > 2 || m / 1024 > 200 || code != 2) ? "OVER" : "ok"
			printf "| %s | %d | %s | %d | %.2f | %.2f | %d | %s |\n", c, k, cmd, code, u + s, e, m / 1024, over
		}'
	done
done
