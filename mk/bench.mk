# ---- bench: whole processes against tshark (issue 6) -----------------------
# "make bench" also runs internal/gen/bench.sh: the generator makes captures of
# 200k and 2M packets of mixed RoCEv2 traffic (kept in BENCH_DIR, not
# committed) and the script times cmpd-dissect stats, conns and the default
# view against tshark -T fields -e frame.number on them, side by side, RUNS
# (3) times, and prints the medians of wall and CPU time and peak RSS.
# "make bench-compare BENCH_SIZES=200000" for the small one only.
.PHONY: bench-compare
bench: bench-compare

bench-compare:
	GO=$(GO) BIN=$(BIN) sh internal/gen/bench.sh
