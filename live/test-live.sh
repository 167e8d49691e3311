#!/bin/bash
# test-live.sh: make test-live. Runs the live-traces harness into a fresh
# directory, then checks every fresh capture:
#   - cmpd-dissect check --expect testdata/expect/live-NAME.yaml: the
#     decode matches what was sent (replay) or what the kernel is known to
#     send (NFS), with no unexpected finding;
#   - go test ./replay -run Live with CMPD_LIVE_DIR: what each side's
#     librdmacm handed up is what the capture carries, and the re-driven
#     connections carry the source capture's private data.
# Prints the time each part took. Usage: live/test-live.sh [REGEX]
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${LIVE_CACHE:-/var/cache/cmpd-dissect-live}
FRESH=$CACHE/fresh
T0=$(date +%s)
rm -rf "$FRESH" && mkdir -p "$FRESH"

fails=0 n=0 harness=0 missing=0
# A failing scenario fails the run, but the captures of the others are
# still checked.
"$REPO/live/live-traces.sh" -o "$FRESH" "$@" || harness=1
T1=$(date +%s)
ONLY=${1:-}

BIN=$CACHE/bin/cmpd-dissect # built by live-traces.sh (-tags rdmacm)
[ -x "$BIN" ] || { echo "test-live: $BIN was not built (the lab failed before the scenarios)"; exit 3; }
for exp in "$REPO"/testdata/expect/live-*.yaml; do
	name=$(basename "$exp" .yaml)
	if [ -n "$ONLY" ] && ! [[ ${name#live-} =~ $ONLY ]]; then continue; fi
	cap=$FRESH/$name.pcap
	n=$((n + 1))
	if [ ! -e "$cap" ]; then
		echo "FAIL $name: no fresh capture"
		missing=$((missing + 1))
		continue
	fi
	if out=$("$BIN" check --expect "$exp" "$cap" 2>&1); then
		echo "ok   $name"
	else
		echo "FAIL $name: cmpd-dissect check --expect $exp"
		echo "$out" | sed 's/^/     /'
		fails=$((fails + 1))
	fi
done
echo "== librdmacm reports against the captures (go test ./replay -run Live)"
if ! (cd "$REPO" && CMPD_LIVE_DIR=$FRESH go test -count=1 -run 'Live' ./replay); then
	# With captures missing the comparison cannot tell a decode error from
	# a scenario that never ran; count it against the lab then.
	if [ "$harness" = 0 ] && [ "$missing" = 0 ]; then fails=$((fails + 1)); else harness=1; fi
fi
T2=$(date +%s)
echo "test-live: $n expectations, $fails decode failure(s), $missing capture(s) not produced; harness $((T1 - T0)) s, checks $((T2 - T1)) s, total $((T2 - T0)) s"
# Exit 1: a fresh capture from the real stack decodes differently from what
# was sent or what the kernel is known to send. Exit 3: every capture that
# was produced checks out, but the lab (VMs, scenarios) failed to produce
# some: an infrastructure failure, reported separately so CI can tell them apart.
if [ "$fails" != 0 ]; then exit 1; fi
if [ "$harness" != 0 ] || [ "$missing" != 0 ]; then exit 3; fi
exit 0
