# ---- bench: whole processes against tshark (issue 6) -----------------------
# make bench-compare runs internal/gen/bench.sh ("make bench" runs it after
# bench-go): the generator makes captures of 200k and 2M packets of mixed RoCEv2 traffic (kept in BENCH_DIR, not
# committed) and the script times cmpd-dissect stats, conns and the default
# view against tshark -T fields -e frame.number on them, side by side, RUNS
# (3) times, and prints the medians of wall and CPU time and peak RSS.
# "make bench-compare BENCH_SIZES=200000" for the small one only.
.PHONY: bench-compare
bench-compare: ## whole processes against tshark on generated 200k- and 2M-packet captures (BENCH_SIZES, RUNS; minutes)
	GO=$(GO) BIN=$(BIN) sh internal/gen/bench.sh

# ---- pgo: the profile the compiler optimises the command with -------------
# cmd/cmpd-dissect/default.pgo is a CPU profile of stats, conns and the
# default view on the 200k-packet bench capture (BenchmarkCommand*); "go
# build" uses it by itself (profile-guided optimisation: hot interface calls
# devirtualised and inlined, ~4-5% here). "make pgo" makes it again, after
# changes to the hot path.
PGO_DIR ?= /tmp/cmpd-pgo
.PHONY: pgo
pgo: ## remake cmd/cmpd-dissect/default.pgo from CPU profiles of stats, conns and the default view
	mkdir -p $(PGO_DIR)
	test -s $(PGO_DIR)/bench.pcap || $(GO) run ./internal/gen -bench-out $(PGO_DIR)/bench.pcap -bench-packets 200000
	for c in Stats Conns View; do \
		CMPD_BENCH_PCAP=$(PGO_DIR)/bench.pcap $(GO) test -pgo=off -run='^$$' -bench="Command$$c\$$" -benchtime=20x \
			-cpuprofile $(PGO_DIR)/$$c.prof ./cmd/cmpd-dissect >/dev/null || exit 1; \
	done
	$(GO) tool pprof -proto $(PGO_DIR)/Stats.prof $(PGO_DIR)/Conns.prof $(PGO_DIR)/View.prof > cmd/cmpd-dissect/default.pgo
