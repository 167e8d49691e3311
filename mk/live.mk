# ---- live traces (issue 8) -------------------------------------------------
# make live-traces   (Linux, root) boot two qemu VMs with Debian's 6.1 kernel,
#                    soft-RoCE and soft-iWARP, run every scenario of
#                    live/scenarios.sh and write the captures, with the replay
#                    engine's reports, into testdata/pcaps/real/live-*.
#                    LIVE_ONLY=REGEX runs a subset; LIVE_CACHE (default
#                    /var/cache/cmpd-dissect-live) keeps kernel, siw, initramfs.
# make test-live     the same into a fresh directory, then cmpd-dissect check
#                    --expect testdata/expect/live-NAME.yaml on every capture
#                    and the comparison of librdmacm's reports with the decode.
.PHONY: live-traces test-live test-live-ci

LIVE_ONLY ?=

live-traces: ## (Linux, root) capture every live/scenarios.sh scenario in two qemu VMs into testdata/pcaps/real/live-*
	live/live-traces.sh $(LIVE_ONLY)

test-live: ## (Linux, root) fresh captures from the VM lab, checked against testdata/expect/live-*.yaml
	live/test-live.sh $(LIVE_ONLY)

# test-live-ci: make test-live as CI runs it (make test TEST_LIVE=1). A fresh
# capture that decodes differently from what was sent or from what the kernel
# is known to send fails (exit 1). When the lab itself fails to produce some
# captures (a VM that does not boot: exit 3 from test-live.sh) it says so
# loudly but does not fail the run: every capture it did produce was checked.
test-live-ci: ## test-live as make test TEST_LIVE=1 runs it (a VM that does not boot is a warning)
	@live/test-live.sh; rc=$$?; \
	if [ $$rc -eq 3 ]; then \
		echo "test-live: WARNING: the VM lab did not produce every capture (see above);"; \
		echo "test-live: every capture it produced decoded as expected. Not counted as a failure."; \
		exit 0; \
	fi; exit $$rc
