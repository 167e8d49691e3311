#!/bin/sh
# Whole-process speed and memory of cmpd-dissect against tshark on the same
# generated captures (make bench). Captures are made on demand by
# "go run ./internal/gen -bench-out FILE -bench-packets N" and kept in
# BENCH_DIR (default /tmp/cmpd-bench); they are not committed.
#
# For each capture (200k and 2M packets) it runs, side by side, RUNS times
# (default 3) in turn:
#   tshark -n -r FILE -T fields -e frame.number      (the reference)
#   cmpd-dissect stats FILE
#   cmpd-dissect conns FILE
#   cmpd-dissect -r FILE > /dev/null                  (the default view)
#   cmpd-dissect export --packets -o DIR FILE         (Parquet, every table;
#                                                       peak RSS flat in N)
#   gen -bench-floor FILE      (only reading the records and a CRC-32 of each
#                               packet: what the ICRC check costs at least)
# each with stdout to /dev/null, measured from the kernel's rusage of the
# process (go run ./internal/gen -bench-measure CMD…), and prints per command
# the median wall time, median CPU time (user+sys), the median peak RSS and
# the ratios tshark/cmpd-dissect of the medians. The wall-time ratio is what a
# user waits for (cmpd-dissect reads files on a second goroutine, so its CPU
# time exceeds its wall time); on a loaded machine, where the second core is
# not free, compare CPU times instead.
# Every run's figures are kept in BENCH_DIR/runs.txt.
#
# Environment: BENCH_DIR, BENCH_SIZES (default "200000 2000000"), RUNS,
# TSHARK_MAX (largest capture tshark is run on; default 2000000),
# BIN (default bin/cmpd-dissect), BASE_BIN (another build, e.g. of the
# commit before a change: its stats, conns and default view are run in the
# same rounds, so the two builds' ratios are measured side by side).
set -eu
BENCH_DIR=${BENCH_DIR:-/tmp/cmpd-bench}
BENCH_SIZES=${BENCH_SIZES:-"200000 2000000"}
TSHARK_MAX=${TSHARK_MAX:-2000000}
RUNS=${RUNS:-3}
BIN=${BIN:-bin/cmpd-dissect}
GO=${GO:-go}

mkdir -p "$BENCH_DIR"
$GO build -o "$BIN" ./cmd/cmpd-dissect
GEN="$BENCH_DIR/gen"
$GO build -o "$GEN" ./internal/gen
have_tshark=1
command -v tshark >/dev/null 2>&1 || { have_tshark=0; echo "bench: tshark not found: ratios skipped (apt-get install tshark)" >&2; }
runs="$BENCH_DIR/runs.txt"
: >"$runs"

# measure N NAME CMD... : runs CMD once (stdout to /dev/null) under the
# generator's -bench-measure, which reads the child's rusage (microsecond
# CPU times, peak RSS), and appends "N NAME wall cpu rss_kb" to $runs.
measure() {
	n=$1 name=$2; shift 2
	echo "$n $name $("$GEN" -bench-measure "$@")" >>"$runs"
}

# median N NAME COLUMN: the median of that column over the runs.
median() {
	awk -v n="$1" -v name="$2" -v col="$3" '$1 == n && $2 == name { print $col }' "$runs" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

for n in $BENCH_SIZES; do
	f="$BENCH_DIR/bench-$n.pcap"
	if [ ! -s "$f" ]; then
		"$GEN" -bench-out "$f" -bench-packets "$n"
	fi
	i=0
	while [ $i -lt "$RUNS" ]; do
		if [ $have_tshark = 1 ] && [ "$n" -le "$TSHARK_MAX" ]; then
			measure "$n" tshark tshark -n -r "$f" -T fields -e frame.number
		fi
		measure "$n" stats "$BIN" stats "$f"
		measure "$n" conns "$BIN" conns "$f"
		measure "$n" view "$BIN" -r "$f"
		measure "$n" export "$BIN" export --packets -o "$BENCH_DIR/export-$n" "$f"
		if [ -n "${BASE_BIN:-}" ]; then
			measure "$n" base-stats "$BASE_BIN" stats "$f"
			measure "$n" base-conns "$BASE_BIN" conns "$f"
			measure "$n" base-view "$BASE_BIN" -r "$f"
		fi
		measure "$n" floor "$GEN" -bench-floor "$f"
		i=$((i + 1))
	done
done

echo "Median of $RUNS runs each, side by side; CPU = user + sys."
echo
echo "| packets | command | wall s | CPU s | peak RSS MB | tshark/ours (wall) | tshark/ours (CPU) |"
echo "| ---: | --- | ---: | ---: | ---: | ---: | ---: |"
for n in $BENCH_SIZES; do
	ts_wall=$(median "$n" tshark 3) ts_cpu=$(median "$n" tshark 4)
	for name in tshark stats conns view export base-stats base-conns base-view floor; do
		wall=$(median "$n" $name 3)
		[ -n "$wall" ] || continue
		cpu=$(median "$n" $name 4) rss=$(median "$n" $name 5)
		label=$name
		case $name in
		stats | conns) label="cmpd-dissect $name" ;;
		view) label="cmpd-dissect -r (default view)" ;;
		export) label="cmpd-dissect export --packets (parquet)" ;;
		base-stats | base-conns) label="BASE_BIN ${name#base-}" ;;
		base-view) label="BASE_BIN -r (default view)" ;;
		tshark) label="tshark -T fields -e frame.number" ;;
		floor) label="floor: read + CRC-32 of each packet" ;;
		esac
		rw=- rc=-
		if [ -n "$ts_wall" ] && [ $name != tshark ]; then
			rw=$(echo "scale=1; $ts_wall / ($wall + 0.0001)" | bc -l)×
			rc=$(echo "scale=1; $ts_cpu / ($cpu + 0.0001)" | bc -l)×
		fi
		printf "| %s | %s | %.2f | %.3f | %.1f | %s | %s |\n" "$n" "$label" "$wall" "$cpu" "$(echo "$rss / 1024" | bc -l)" "$rw" "$rc"
	done
done
