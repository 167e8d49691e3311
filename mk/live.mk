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
.PHONY: live-traces test-live

LIVE_ONLY ?=

live-traces:
	live/live-traces.sh $(LIVE_ONLY)

test-live:
	live/test-live.sh $(LIVE_ONLY)
