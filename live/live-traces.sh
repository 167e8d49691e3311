#!/bin/bash
# live-traces.sh: capture the real Linux RDMA stack (soft-RoCE and
# soft-iWARP) on this machine, which has no RDMA support of its own.
#
# It installs what it needs from Debian's packages, fetches Debian's 6.1
# kernel (it has rdma_rxe, rdma_cm, rpcrdma, nfsd as modules), builds siw out
# of tree (Debian does not ship it), builds an initramfs that boots into the
# host's own root over virtio-9p, builds cmpd-dissect with -tags rdmacm, then
# boots a client and a server VM (qemu TCG) joined by two socket links, and
# runs every scenario of live/scenarios.sh in them. Captures and the
# replay engine's reports land in $OUT (default testdata/pcaps/real) as
# live-NAME.pcap and live-NAME.{client,server}.jsonl.
#
# Usage (root, Linux): live/live-traces.sh [-o OUTDIR] [-k] [REGEX]
#   REGEX   run only the scenarios whose name matches (bash regex)
#   -k      keep the run directory (VM consoles, logs) even on success
# Environment: LIVE_CACHE (default /var/cache/cmpd-dissect-live) holds the
# kernel, siw, initramfs and the run directory; a second run reuses them.
# LIVE_SCENARIOS names another scenario file (default live/scenarios.sh);
# LIVE_TIMEOUT bounds the VMs' run (default 1800 s).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${LIVE_CACHE:-/var/cache/cmpd-dissect-live}
OUT=$REPO/testdata/pcaps/real
KEEP=
while getopts "o:k" opt; do
	case $opt in
	o) OUT=$(mkdir -p "$OPTARG" && cd "$OPTARG" && pwd) ;;
	k) KEEP=1 ;;
	*) echo "usage: $0 [-o OUTDIR] [-k] [REGEX]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
ONLY=${1:-}

T0=$(date +%s)
say() { printf '[live %4ds] %s\n' $(($(date +%s) - T0)) "$*"; }
die() { printf '[live] FAILED: %s\n' "$*" >&2; exit 1; }

[ "$(uname -s)" = Linux ] || die "needs Linux"
[ "$(id -u)" = 0 ] || die "needs root (apt-get, qemu, 9p export of /)"

# --- packages -------------------------------------------------------------
PKGS="qemu-system-x86 busybox-static rdma-core ibverbs-utils ibverbs-providers librdmacm-dev
libibverbs-dev rdmacm-utils tcpdump nfs-kernel-server nfs-common rpcbind linux-headers-amd64
linux-source-6.1 kmod cpio xz-utils bc iproute2 procps git gcc make libelf-dev
nvme-cli open-iscsi perftest"
missing=()
for p in $PKGS; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$st" = "install ok installed" ] || missing+=("$p")
done
mkdir -p "$CACHE"
if [ ${#missing[@]} -gt 0 ]; then
	say "installing ${missing[*]}"
	{ apt-get -o DPkg::Lock::Timeout=600 update -qq &&
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}"; } \
		>"$CACHE/apt.log" 2>&1 || { tail -n 30 "$CACHE/apt.log" >&2; die "apt-get install ${missing[*]} (log: $CACHE/apt.log)"; }
fi
command -v go >/dev/null || { [ -x /usr/local/go/bin/go ] && export PATH=/usr/local/go/bin:$PATH; } || true
command -v go >/dev/null || die "go is not on PATH (the replay engine is built from this repository)"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing after install"

# --- kernel ---------------------------------------------------------------
mkdir -p "$CACHE"
KVER=$(apt-cache depends linux-headers-amd64 | sed -n 's/.*Depends: linux-headers-\(6\.1\.[0-9.-]*-amd64\)$/\1/p' | head -1)
[ -n "$KVER" ] || die "cannot tell the 6.1 kernel version from linux-headers-amd64"
[ -d "/usr/src/linux-headers-$KVER" ] || die "/usr/src/linux-headers-$KVER missing (apt-get install linux-headers-$KVER)"
KDIR=$CACHE/kernel-$KVER
MODDIR=$KDIR/lib/modules/$KVER
if [ ! -e "$KDIR/.done" ]; then
	say "fetching linux-image-$KVER"
	rm -rf "$KDIR" && mkdir -p "$KDIR"
	(cd "$CACHE" && apt-get download "linux-image-$KVER" 2>&1 | grep -v "^W: Download is performed unsandboxed" || true)
	deb=$(ls "$CACHE"/linux-image-"$KVER"_*.deb | head -1)
	dpkg-deb -x "$deb" "$KDIR"
	dpkg-deb -f "$deb" Version >"$KDIR/.version"
	rm -f "$deb"
	touch "$KDIR/.done"
fi
KERNEL=$KDIR/boot/vmlinuz-$KVER

# --- siw (not in Debian's kernel) ------------------------------------------
SIW=$MODDIR/extra/siw.ko
# siw_source NAME: unpacks siw's sources from linux-source-6.1 into
# $CACHE/NAME-src (afresh) and prints the module's directory there.
siw_source() {
	local src=$CACHE/$1-src
	rm -rf "$src" && mkdir -p "$src" &&
		tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$src" --strip-components=1 linux-source-6.1/drivers/infiniband/sw/siw &&
		echo "$src/drivers/infiniband/sw/siw"
}

# siw_make NAME DIR KO: builds the siw module in DIR for $KVER (the log in
# $CACHE/NAME-build.log, shown when it fails) and copies it to KO.
siw_make() {
	make -s -C "/usr/src/linux-headers-$KVER" M="$2" CONFIG_RDMA_SIW=m modules >"$CACHE/$1-build.log" 2>&1 ||
		{ cat "$CACHE/$1-build.log"; die "$1 build"; }
	mkdir -p "$(dirname "$3")"
	cp "$2/siw.ko" "$3"
}

if [ ! -e "$SIW" ]; then
	say "building siw for $KVER from linux-source-6.1"
	dir=$(siw_source siw) || die "siw sources"
	siw_make siw "$dir" "$SIW"
	rm -f "$MODDIR/modules.dep"
fi
[ -e "$MODDIR/modules.dep" ] || depmod -b "$KDIR" "$KVER"

# A second siw with what 6.1 makes compile-time constants turned on: MPA CRC
# required (C flag, CRC32c on every FPDU), peer-to-peer mode (MPA v2 P2P bit
# and an RTR message after the reply) and GSO (siw's non-standard 0x08 MPA
# flag). Kept outside the modules tree; the guest insmods it by path for the
# siw4-crc-* scenarios.
SIW_VARIANT=$CACHE/siw-variant-$KVER/siw.ko
if [ ! -e "$SIW_VARIANT" ]; then
	say "building the siw variant (MPA CRC, peer-to-peer, GSO)"
	dir=$(siw_source siw-variant) || die "siw variant sources"
	sed -i -e 's/^const bool try_gso;/const bool try_gso = true;/' \
		-e 's/^const bool mpa_crc_required;/const bool mpa_crc_required = true;/' \
		-e 's/^const bool peer_to_peer;/const bool peer_to_peer = true;/' "$dir/siw_main.c"
	[ "$(grep -c '= true;$' "$dir/siw_main.c")" -ge 5 ] || die "siw variant: siw_main.c no longer has the constants to turn on"
	siw_make siw-variant "$dir" "$SIW_VARIANT"
fi

# A third siw that sends MPA revision 1 requests (siw_main.c's mpa_version,
# a plain variable in 6.1): revision 1 carries no IRD/ORD. Swapped in on the
# client only for the siw4-mpa1-* scenarios.
SIW_MPA1=$CACHE/siw-mpa1-$KVER/siw.ko
if [ ! -e "$SIW_MPA1" ]; then
	say "building the siw variant that sends MPA revision 1"
	dir=$(siw_source siw-mpa1) || die "siw mpa1 variant sources"
	sed -i -e 's/^u_char mpa_version = MPA_REVISION_2;/u_char mpa_version = MPA_REVISION_1;/' "$dir/siw_main.c"
	grep -q '^u_char mpa_version = MPA_REVISION_1;' "$dir/siw_main.c" || die "siw mpa1 variant: siw_main.c no longer defines mpa_version"
	siw_make siw-mpa1 "$dir" "$SIW_MPA1"
fi

# --- initramfs --------------------------------------------------------------
INITRD=$CACHE/initramfs-$KVER.cpio.gz
if [ ! -e "$INITRD" ] || [ "$REPO/live/init" -nt "$INITRD" ]; then
	say "building the initramfs"
	ir=$CACHE/initramfs
	rm -rf "$ir" && mkdir -p "$ir"/{bin,dev,proc,sys,modules}
	cp /bin/busybox "$ir/bin/busybox"
	# ldd fails on a static executable, which is what the initramfs needs.
	if ldd "$ir/bin/busybox" >/dev/null 2>&1; then die "/bin/busybox is not static (install busybox-static)"; fi
	mknod "$ir/dev/console" c 5 1
	cp "$REPO/live/init" "$ir/init"
	# The modules and their dependencies, in load order.
	: >"$ir/modules.order"
	add_module() {
		local rel=$1 dep
		grep -qxF "$(basename "$rel")" "$ir/modules.order" && return 0
		for dep in $(sed -n "s|^$rel: *||p" "$MODDIR/modules.dep"); do add_module "$dep"; done
		cp "$MODDIR/$rel" "$ir/modules/"
		basename "$rel" >>"$ir/modules.order"
	}
	for m in virtio_pci virtio_net 9pnet_virtio 9p overlay; do
		rel=$(grep -o "^[^:]*/$m\.ko" "$MODDIR/modules.dep" | head -1)
		[ -n "$rel" ] || die "module $m not in $MODDIR"
		add_module "$rel"
	done
	(cd "$ir" && find . | cpio -o -H newc --quiet | gzip -1 >"$INITRD")
fi

# --- cmpd-dissect with librdmacm --------------------------------------------
BIN=$CACHE/bin/cmpd-dissect
say "building cmpd-dissect -tags rdmacm"
mkdir -p "$CACHE/bin"
if ! (cd "$REPO" && CGO_ENABLED=1 go build -tags rdmacm -o "$BIN" ./cmd/cmpd-dissect 2>"$CACHE/build.log"); then
	# Work in progress elsewhere in the tree can break the build: fall back
	# to the last commit.
	say "the working tree does not build ($(head -1 "$CACHE/build.log")); building HEAD $(git -C "$REPO" rev-parse --short HEAD)"
	rm -rf "$CACHE/head" && mkdir -p "$CACHE/head"
	git -C "$REPO" archive HEAD | tar -x -C "$CACHE/head"
	(cd "$CACHE/head" && CGO_ENABLED=1 go build -tags rdmacm -o "$BIN" ./cmd/cmpd-dissect) || die "go build -tags rdmacm"
fi

# --- the VMs ----------------------------------------------------------------
RUN=$CACHE/run
rm -rf "$RUN" && mkdir -p "$RUN/ctl" "$RUN/out"
cat >"$RUN/config" <<CFG
REPO=$REPO
BIN=$BIN
SIW_VARIANT=$SIW_VARIANT
SIW_MPA1=$SIW_MPA1
SCENARIOS=/live/scenarios.sh
ONLY='${ONLY//\'/}'
CFG
# The VMs see $RUN as /live: the scenario list goes there.
cp "${LIVE_SCENARIOS:-$REPO/live/scenarios.sh}" "$RUN/scenarios.sh" || die "no scenario file ${LIVE_SCENARIOS:-}"
# So do the captures a scenario re-drives (replay --from): the guest mounts
# its own tmpfs on /tmp, so a repository under the host's /tmp (a CI clone)
# is not visible through the host root.
cp "$REPO/testdata/pcaps/real/rxe-nfs42-rdma.pcap" "$RUN/redrive-source.pcap" || die "no capture to re-drive"
vm() { # vm ROLE NETOPT PORT0 PORT1
	local role=$1 net=$2 mac=$([ "$1" = client ] && echo 01 || echo 02)
	# no_timer_check: under a loaded host TCG can fail the kernel's IO-APIC
	# timer check and panic at boot.
	qemu-system-x86_64 -machine q35,accel=tcg -m 1024 -smp 1 -nographic -no-reboot \
		-kernel "$KERNEL" -initrd "$INITRD" \
		-append "console=ttyS0 panic=-1 no_timer_check loglevel=4 cmpd.role=$role cmpd.guest=$REPO/live/guest.sh cmpd.modules=$MODDIR" \
		-virtfs local,path=/,mount_tag=hostroot,readonly=on,security_model=none,multidevs=remap,id=hostroot \
		-virtfs local,path="$RUN",mount_tag=liveout,security_model=none,id=liveout \
		-netdev socket,id=n0,$net=127.0.0.1:$3 -device virtio-net-pci,netdev=n0,romfile=,mac=52:54:00:12:00:$mac \
		-netdev socket,id=n1,$net=127.0.0.1:$4 -device virtio-net-pci,netdev=n1,romfile=,mac=52:54:00:12:01:$mac \
		</dev/null >"$RUN/$role.console" 2>&1
}

# run_vms boots both VMs and follows the client's progress lines until both
# have powered off. It returns 3 when a VM stopped before it was up (a boot
# failure, worth one more try), 0 otherwise.
run_vms() {
	rm -rf "$RUN/ctl" "$RUN/out" "$RUN/progress" "$RUN"/*.log "$RUN"/*.console
	mkdir -p "$RUN/ctl" "$RUN/out"
	local port0=$((20000 + RANDOM % 20000)) booted=
	seen=0
	local deadline=$(($(date +%s) + ${LIVE_TIMEOUT:-1800}))
	vm server listen $port0 $((port0 + 1)) &
	SERVER_PID=$!
	sleep 1
	vm client connect $port0 $((port0 + 1)) &
	CLIENT_PID=$!
	trap cleanup EXIT
	while kill -0 "$CLIENT_PID" 2>/dev/null || kill -0 "$SERVER_PID" 2>/dev/null; do
		if [ -z "$booted" ] && [ -e "$RUN/ctl/up-client" ] && [ -e "$RUN/ctl/up-server" ]; then
			booted=1
			say "both VMs up: rxe0 on eth0, siw0 on eth1"
		fi
		if [ -z "$booted" ]; then
			for role in client server; do
				pid=$([ $role = client ] && echo "$CLIENT_PID" || echo "$SERVER_PID")
				if ! kill -0 "$pid" 2>/dev/null && [ ! -e "$RUN/ctl/up-$role" ]; then
					say "the $role VM stopped before it was up:"
					grep -a -m1 -E "Kernel panic|FAILED|SETUP-FAILED" "$RUN/$role.console" "$RUN/$role.log" 2>/dev/null | sed 's/^/        /' || true
					cleanup
					wait "$CLIENT_PID" "$SERVER_PID" 2>/dev/null || true
					return 3
				fi
			done
		fi
		show_progress
		if [ "$(date +%s)" -gt "$deadline" ]; then
			say "timeout: stopping the VMs"
			cleanup
			break
		fi
		sleep 0.5
	done
	wait "$CLIENT_PID" 2>/dev/null || true
	wait "$SERVER_PID" 2>/dev/null || true
	trap - EXIT
	show_progress
	return 0
}
# show_progress prints the client's progress lines not shown yet.
show_progress() {
	[ -e "$RUN/progress" ] || return 0
	local n
	n=$(wc -l <"$RUN/progress")
	if [ "$n" -gt "$seen" ]; then
		tail -n +$((seen + 1)) "$RUN/progress" | head -n $((n - seen)) | while IFS= read -r line; do say "$line"; done
		seen=$n
	fi
}
cleanup() {
	kill "$SERVER_PID" "$CLIENT_PID" 2>/dev/null || true
}

tries=${LIVE_BOOT_TRIES:-3}
for try in $(seq 1 "$tries"); do
	say "booting the server and client VMs (kernel $KVER, TCG)$([ "$try" -gt 1 ] && echo " (attempt $try of $tries)")"
	rc=0
	run_vms || rc=$?
	[ $rc = 3 ] || break
done

show_logs() {
	for role in server client; do
		echo "----- $role VM console ($RUN/$role.console), last 40 lines" >&2
		tail -n 40 "$RUN/$role.console" | sed 's/\x1b[[0-9;?]*[A-Za-z]//g; s/\x1bc//g' | tr -d '\000-\010\016-\037' >&2 || true
		echo "----- $role guest log ($RUN/$role.log), last 60 lines" >&2
		tail -n 60 "$RUN/$role.log" >&2 || true
	done
}
if ! grep -q "^END " "$RUN/progress" 2>/dev/null; then
	show_logs
	die "the VMs stopped before the scenarios ended (logs above, all in $RUN)"
fi
fails=$(sed -n 's/^END //p' "$RUN/progress")

# Collect what the scenarios that passed left: captures and the replay
# engine's reports.
mkdir -p "$OUT"
n=0
for ok in "$RUN"/out/live-*.ok; do
	[ -e "$ok" ] || continue
	base=${ok%.ok}
	cp "$base.pcap" "$OUT/"
	for r in "$base".client.jsonl "$base".server.jsonl; do
		[ -s "$r" ] && cp "$r" "$OUT/"
	done
	n=$((n + 1))
done
uname_vm=$(sed -n 's/^guest client: kernel \([^,]*\),.*/\1/p' "$RUN/client.log" | head -1)
KPKG=$(cat "$KDIR/.version" 2>/dev/null || echo "?")
if [ "$fails" != 0 ]; then
	show_logs
	grep "^FAIL" "$RUN/progress" >&2
	die "$fails scenario(s) failed (logs above, all in $RUN)"
fi
[ -n "$KEEP" ] || rm -rf "$RUN/ctl"
say "done: $n captures in $OUT (kernel $uname_vm, Debian linux-image $KPKG) in $(($(date +%s) - T0)) s"
