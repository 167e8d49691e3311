# ---- torture (issue 9): hostile input ---------------------------------------
# make torture            every committed capture, N mutants each (seeded), every
#                         view in-process; fails on panic, hang, runaway memory,
#                         lost good frames, unsafe output. Prints a summary.
# make torture N=2000     a larger run (N=0: every mutant of the plan)
# make fuzz-pipeline      the whole-pipeline fuzz targets, PIPELINE_FUZZTIME each
N                 ?= 10
TORTURE_SEED      ?= 1
TORTURE_REPEAT    ?= 100000
TORTURE_TIMEOUT   ?= 30s
PIPELINE_FUZZTIME ?= 30m

# TORTURE_TESTS are the harness's tests (cmd/cmpd-dissect/torture_test.go):
# make torture runs them, make unit skips them, so make test runs them once.
# Exact names: go test's -skip applies to every package, and source has a
# TestDamagedHeader of its own.
TORTURE_TESTS := ^(TestTorture|TestTortureReader|TestOutputSafety|TestLimits|TestLimitPrivateDataDefault|TestLimitConnections|TestDamagedHeaderExit2|TestDamagedPacketRunGoesOn|TestDamagedRecordNamed)$$

.PHONY: torture fuzz-pipeline

torture: ## the hostile-input harness: N mutants of every committed capture through every view (N, TORTURE_SEED)
	CMPD_TORTURE_N=$(N) CMPD_TORTURE_SEED=$(TORTURE_SEED) CMPD_TORTURE_REPEAT=$(TORTURE_REPEAT) \
	CMPD_TORTURE_TIMEOUT=$(TORTURE_TIMEOUT) \
	$(GO) test -count=1 -timeout 90m -v \
		-run '$(TORTURE_TESTS)' \
		./cmd/cmpd-dissect

fuzz-pipeline: ## the whole-pipeline fuzz targets, PIPELINE_FUZZTIME (30m) each
	@set -e; for t in FuzzPipeline FuzzPipelinePacket FuzzPvtdataView; do \
		echo "== $$t ($(PIPELINE_FUZZTIME))"; \
		$(GO) test -run='^$$' -fuzz="^$$t\$$" -fuzztime=$(PIPELINE_FUZZTIME) -fuzzminimizetime=3s -timeout=0 -parallel 1 ./cmd/cmpd-dissect; \
	done
