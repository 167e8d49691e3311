#!/bin/sh
# Whole-process speed and memory of cmpd-dissect against tshark on the same
# generated captures (make bench). Captures are made on demand by
# "go run ./internal/gen -bench-out FILE -bench-packets N" and kept in
# BENCH_DIR (default /tmp/cmpd-bench); they are not committed.
#
# For each capture (200k and 2M packets) it runs, one after the other:
#   tshark -n -r FILE -T fields -e frame.number      (the reference)
#   cmpd-dissect stats FILE
#   cmpd-dissect conns FILE                           (when the command exists)
#   cmpd-dissect -r FILE > /dev/null                  (the default view)
# and prints wall time, CPU time (user+sys), peak RSS (/usr/bin/time -v's
# "Maximum resident set size") and the ratio tshark/cmpd-dissect for both
# times. On a loaded machine the CPU-time ratio is the meaningful one.
#
# Environment: BENCH_DIR, BENCH_SIZES (default "200000 2000000"),
# TSHARK_MAX (largest capture tshark is run on; default 2000000),
# BIN (default bin/cmpd-dissect).
set -eu
BENCH_DIR=${BENCH_DIR:-/tmp/cmpd-bench}
BENCH_SIZES=${BENCH_SIZES:-"200000 2000000"}
TSHARK_MAX=${TSHARK_MAX:-2000000}
BIN=${BIN:-bin/cmpd-dissect}
GO=${GO:-go}

mkdir -p "$BENCH_DIR"
$GO build -o "$BIN" ./cmd/cmpd-dissect
if [ ! -x /usr/bin/time ]; then
	echo "bench: /usr/bin/time is needed (apt-get install time)" >&2
	exit 1
fi
have_tshark=1
command -v tshark >/dev/null 2>&1 || { have_tshark=0; echo "bench: tshark not found: ratios skipped (apt-get install tshark)" >&2; }
have_conns=0
"$BIN" conns --help >/dev/null 2>&1 && have_conns=1

# run NAME CMD... : runs CMD with stdout to /dev/null, prints one row and
# sets LAST_WALL, LAST_CPU.
run() {
	name=$1; shift
	tf=$(mktemp)
	/usr/bin/time -f "%e %U %S %M" -o "$tf" "$@" >/dev/null 2>/dev/null || true
	set -- $(tail -n 1 "$tf")
	rm -f "$tf"
	LAST_WALL=$1
	LAST_CPU=$(echo "$2 + $3" | bc -l)
	rss_mb=$(echo "scale=1; $4 / 1024" | bc -l)
	ratio_w="-"; ratio_c="-"
	if [ -n "${TS_WALL:-}" ] && [ "$name" != "tshark" ]; then
		ratio_w=$(echo "scale=1; $TS_WALL / ($LAST_WALL + 0.0001)" | bc -l)
		ratio_c=$(echo "scale=1; $TS_CPU / ($LAST_CPU + 0.0001)" | bc -l)
	fi
	printf "| %s | %s | %s | %s | %s | %s× | %s× |\n" "$PACKETS" "$name" "$LAST_WALL" "$LAST_CPU" "$rss_mb" "$ratio_w" "$ratio_c"
}

echo "| packets | command | wall s | CPU s | peak RSS MB | tshark/ours (wall) | tshark/ours (CPU) |"
echo "| ---: | --- | ---: | ---: | ---: | ---: | ---: |"
for n in $BENCH_SIZES; do
	f="$BENCH_DIR/bench-$n.pcap"
	if [ ! -s "$f" ]; then
		$GO run ./internal/gen -bench-out "$f" -bench-packets "$n" 2>/dev/null
	fi
	PACKETS=$n
	TS_WALL=""; TS_CPU=""
	if [ $have_tshark = 1 ] && [ "$n" -le "$TSHARK_MAX" ]; then
		run tshark tshark -n -r "$f" -T fields -e frame.number
		TS_WALL=$LAST_WALL; TS_CPU=$LAST_CPU
	fi
	run "stats" "$BIN" stats "$f"
	if [ $have_conns = 1 ]; then
		run "conns" "$BIN" conns "$f"
	fi
	run "default view" "$BIN" -r "$f"
done
