#!/usr/bin/env bash
# Runs every view of BIN on every capture under testdata/ and writes each
# output (stdout, stderr and exit status) to OUT/, one file per capture and
# view, so that two builds can be compared byte for byte with diff -r:
#   internal/snapshot/views.sh BIN OUT
set -u
# conns fits its table to COLUMNS when set (else to a terminal): the
# snapshot is of the output for pipes and files, whatever the caller's shell.
unset COLUMNS
bin=$1 out=$2
mkdir -p "$out"
views=(
	"default|"
	"verbose|-V"
	"json|-T json"
	"fields|-T fields -e frame.number -e frame.len -e bth.opcode -e cm.attr_id -e rpcrdma.xid -e rpcrdma.msg_type"
	"conns|conns"
	"conns-json|conns --json"
	"conns-verbose|conns -V"
	"stats|stats"
	"check|check"
)
find testdata -type f \( -name '*.pcap' -o -name '*.pcapng' -o -name '*.erf' -o -name '*.pcap.gz' \) | sort | while read -r f; do
	name=$(echo "$f" | tr '/' '_')
	for v in "${views[@]}"; do
		label=${v%%|*} args=${v#*|}
		case $label in
		default | verbose | json | fields) cmd=("$bin" -r "$f" $args) ;;
		*) cmd=("$bin" $args "$f") ;;
		esac
		"${cmd[@]}" >"$out/$name.$label.out" 2>"$out/$name.$label.err"
		echo "exit $?" >>"$out/$name.$label.err"
	done
done
