#!/usr/bin/env bash
# startup.sh: what a one-line neardup command costs as a whole process.
#
# Runs `neardup version` and `neardup urlnorm URL` RUNS times each (default 20) and prints
# the median and range of their wall time (measured by bash around the bare command) and of
# their peak RSS (GNU time's "Maximum resident set size", a separate run each).
#
# Most of that RSS is the binary's own file pages mapped by the page faults of the runtime
# and the packages' initialization, so it depends on how the page cache holds the file:
# the binary the linker has just written may sit in 2 MB folios that a single touch maps
# whole (about 10 MB more). The script therefore runs a copy of the binary, as an
# installed one is, after one untimed run of each command.
#
# Usage: scripts/startup.sh [RUNS]   NEARDUP=path times that binary instead of building one.
set -euo pipefail

runs=${1:-20}
[[ -x /usr/bin/time ]] || { echo "/usr/bin/time is missing; install GNU time (apt-get install time)" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [[ -n ${NEARDUP:-} ]]; then
	cp "$NEARDUP" "$tmp/neardup"
else
	echo "building neardup" >&2
	(cd "$root" && go build -o "$tmp/neardup.built" ./cmd/neardup)
	cp "$tmp/neardup.built" "$tmp/neardup"
	rm "$tmp/neardup.built"
fi
bin=$tmp/neardup

# stats prints "median (min-max)" of the numbers in a file, one a line.
stats() { sort -g "$1" | awk -v f="$2" '{v[NR]=$1} END {printf f " (" f "-" f ")", v[int((NR+1)/2)], v[1], v[NR]}'; }

printf '%-40s %22s %24s\n' "median (range) of $runs runs" "wall ms" "peak RSS MB"
for cmd in "version" "urlnorm https://Example.COM:443/a/./b/../c?q=1#frag"; do
	read -ra args <<<"$cmd"
	"$bin" "${args[@]}" >/dev/null
	: >"$tmp/wall"
	: >"$tmp/rss"
	for _ in $(seq "$runs"); do
		t0=$EPOCHREALTIME
		"$bin" "${args[@]}" >/dev/null
		t1=$EPOCHREALTIME
		awk -v a="$t0" -v b="$t1" 'BEGIN {print (b - a) * 1000}' >>"$tmp/wall"
		/usr/bin/time -f '%M' -a -o "$tmp/rss.kb" "$bin" "${args[@]}" >/dev/null
	done
	awk '{print $1 / 1024}' "$tmp/rss.kb" >"$tmp/rss"
	rm "$tmp/rss.kb"
	printf '%-40s %22s %24s\n' "neardup ${args[0]}" "$(stats "$tmp/wall" %.1f)" "$(stats "$tmp/rss" %.1f)"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
