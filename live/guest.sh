#!/bin/bash
# guest.sh runs as PID 1 in each live-traces VM (after live/init switched to
# the host's root with a tmpfs overlay). Its role is cmpd.role= on the kernel
# command line; /live/config (written by live/live-traces.sh) gives REPO,
# BIN, SCENARIOS and ONLY. It brings up eth0 (rxe0) and eth1 (siw0), then
# runs every scenario of live/scenarios.sh in order, its role's half only;
# the two VMs meet at barrier files in /live/ctl. The client
# captures with tcpdump and leaves live-NAME.pcap plus both sides' reports in
# /live/out. Progress lines go to /live/progress. The VM powers off at the
# end whatever happens.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LC_ALL=C

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm && mount -t devpts devpts /dev/pts && mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 liveout /live

poweroff_now() {
	sync
	echo o >/proc/sysrq-trigger
	sleep 10
}
trap poweroff_now EXIT

ROLE=$(sed -n 's/.*cmpd\.role=\([a-z]*\).*/\1/p' /proc/cmdline)
. /live/config || { echo "guest: no /live/config"; exit 1; }
LOG=/live/$ROLE.log
exec >>"$LOG" 2>&1
echo "guest $ROLE: kernel $(uname -r), $(date -u +%FT%TZ)"
set -x

# Addresses (documentation ranges): .1 is the client, .2 the server.
case $ROLE in client) N=1 PEER=2 ;; server) N=2 PEER=1 ;; *) echo "bad ROLE $ROLE"; exit 1 ;; esac

step() { # step WHAT CMD… : run a setup command, fail the whole VM loudly
	local what=$1; shift
	if ! "$@"; then
		echo "SETUP-FAILED $ROLE: $what" | tee -a /live/progress
		exit 1
	fi
}

step "loopback" ip link set lo up
step "eth0 up" ip link set eth0 up
step "eth1 up" ip link set eth1 up
step "eth0 v4" ip addr add 192.0.2.$N/24 dev eth0
step "eth1 v4" ip addr add 198.51.100.$N/24 dev eth1
step "eth0 v6" ip -6 addr add 2001:db8:1::$N/64 dev eth0 nodad
step "eth1 v6" ip -6 addr add 2001:db8:2::$N/64 dev eth1 nodad
sysctl -qw net.ipv6.conf.all.router_solicitations=0 net.ipv6.conf.eth0.router_solicitations=0 net.ipv6.conf.eth1.router_solicitations=0
for m in ib_core ib_uverbs rdma_ucm rdma_cm ib_cm iw_cm rdma_rxe siw rpcrdma; do
	step "modprobe $m" modprobe $m
done
step "rxe0 on eth0" rdma link add rxe0 type rxe netdev eth0
step "siw0 on eth1" rdma link add siw0 type siw netdev eth1
rdma link show
ibv_devices

mkdir -p /live/ctl /live/out
signal() { : >"/live/ctl/$1"; }
await() { # await NAME [SECONDS] (quietly: no xtrace in the loop)
	{ local xt=$-; set +x; } 2>/dev/null
	local i=0 max=$((${2:-90} * 10)) rc=0
	while [ ! -e "/live/ctl/$1" ]; do
		i=$((i + 1))
		[ $i -gt $max ] && { echo "timeout waiting for $1"; rc=1; break; }
		sleep 0.1
	done
	[[ $xt == *x* ]] && set -x
	return $rc
}
signal "up-$ROLE"
await "up-$([ $ROLE = client ] && echo server || echo client)" 120 || exit 1

nfs_server_started=
nfs_server_start() {
	[ -n "$nfs_server_started" ] && return 0
	mkdir -p /export /var/lib/nfs/rpc_pipefs /var/lib/nfs/v4recovery /run/rpcbind
	mount -t tmpfs -o size=16m tmpfs /export
	echo "hello from the live-traces NFS server" >/export/hello.txt
	mkdir -p /export/dir && echo data >/export/dir/file
	echo "/export *(rw,fsid=0,no_subtree_check,no_root_squash,insecure)" >/etc/exports
	mount -t nfsd nfsd /proc/fs/nfsd
	rpcbind -w || return 1
	exportfs -ra || return 1
	rpc.mountd || return 1
	rpc.nfsd 4 || return 1
	echo 'rdma 20049' >/proc/fs/nfsd/portlist || return 1
	cat /proc/fs/nfsd/portlist
	nfs_server_started=1
}

svc_default=$(cat /proc/sys/sunrpc/svc_rdma/max_req_size 2>/dev/null)
cli_default_w=$(sysctl -n sunrpc.rdma_max_inline_write 2>/dev/null)
cli_default_r=$(sysctl -n sunrpc.rdma_max_inline_read 2>/dev/null)

# addresses LINK FAMILY PORT: sets IF, DEV (the RDMA device), SRV (the
# server's address) and FILTER (iWARP: the ULP's TCP port).
addresses() {
	case $1$2 in
	rxe4) IF=eth0 SRV=192.0.2.2 ;;
	rxe6) IF=eth0 SRV=2001:db8:1::2 ;;
	siw4) IF=eth1 SRV=198.51.100.2 ;;
	siw6) IF=eth1 SRV=2001:db8:2::2 ;;
	esac
	case $1 in rxe) DEV=rxe0 FILTER="udp port 4791" ;; siw) DEV=siw0 FILTER="tcp port $3" ;; esac
}

# The rdma_cm port each kind of scenario listens on.
kind_port() {
	case $1 in
	nvme) echo 4420 ;;     # NVME_RDMA_IP_PORT
	iser) echo 3260 ;;     # iSCSI's port, which iSER keeps
	rping) echo 7174 ;;    # rping's default
	perftest) echo 18515 ;; # perftest's default
	*) echo 20049 ;;
	esac
}

# capture_start NAME: tcpdump on the scenario's interface, or on the one a
# scenario line names with CAPIF= (any: Linux cooked capture, LINUX_SLL2 by
# default, CAPLINK=LINUX_SLL for the older header).
capture_start() { # capture_start NAME
	local y=()
	[ -n "$CAPLINK" ] && y=(-y "$CAPLINK")
	# --immediate-mode makes libpcap use fixed-size TPACKET_V2 ring
	# frames as large as the snapshot length: with -s 0 (262144) the
	# default 2 MiB buffer holds 8 packets and a bulk transfer loses most
	# of its packets to "dropped by kernel". CAPBUF=KiB gives a larger
	# ring, CAPSNAP a smaller snapshot length.
	[ -n "$CAPBUF" ] && y+=(-B "$CAPBUF")
	rm -f /tmp/tcpdump.err
	tcpdump -i "${CAPIF:-$IF}" "${y[@]}" -s "${CAPSNAP:-0}" -U --immediate-mode -Z root -w "/tmp/$1.pcap" "$FILTER" 2>/tmp/tcpdump.err &
	TCPDUMP=$!
	local i=0
	{ set +x; } 2>/dev/null
	until grep -q "listening on" /tmp/tcpdump.err 2>/dev/null; do
		i=$((i + 1)); [ $i -gt 100 ] && { cat /tmp/tcpdump.err; set -x; return 1; }
		sleep 0.1
	done
	set -x
}
capture_stop() { # capture_stop NAME
	sleep 0.5
	kill -INT $TCPDUMP; wait $TCPDUMP
	cat /tmp/tcpdump.err
	# A scenario that sized the ring for its burst wants every packet.
	if [ -n "$CAPBUF" ] && ! grep -q "^0 packets dropped by kernel" /tmp/tcpdump.err; then
		echo "tcpdump lost packets"; return 1
	fi
	cp "/tmp/$1.pcap" "/live/out/live-$1.pcap"
}

server_replay() { # server_replay NAME ARGS…
	local name=$1; shift
	"$BIN" replay --role server --addr "$SRV" "$@" >"/live/out/live-$name.server.jsonl" 2>"/live/out/live-$name.server.err" &
	local pid=$! i=0
	{ set +x; } 2>/dev/null
	until grep -q '"listening"' "/live/out/live-$name.server.jsonl"; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 $pid 2>/dev/null; then
			cat "/live/out/live-$name.server.err"; kill $pid 2>/dev/null; set -x; return 1
		fi
		sleep 0.1
	done
	set -x
	signal "$name.ready"
	wait $pid || { cat "/live/out/live-$name.server.err"; return 1; }
}
client_replay() {
	local name=$1; shift
	"$BIN" replay --role client --addr "$SRV" "$@" >"/live/out/live-$name.client.jsonl" 2>"/live/out/live-$name.client.err" ||
		{ cat "/live/out/live-$name.client.err"; return 1; }
}

server_nfs() { # server_nfs NAME VERS W R MAXREQ
	local name=$1
	nfs_server_start || return 1
	if [ "$5" != 0 ]; then echo "$5" >/proc/sys/sunrpc/svc_rdma/max_req_size; else echo "$svc_default" >/proc/sys/sunrpc/svc_rdma/max_req_size; fi
	signal "$name.ready"
	await "$name.client-done" 120
}
client_nfs() { # client_nfs NAME VERS W R MAXREQ [DROP]
	local name=$1 vers=$2 w=$3 r=$4 drop=${6:-0} src rc=0
	[ "$w" != 0 ] || w=$cli_default_w
	[ "$r" != 0 ] || r=$cli_default_r
	sysctl -qw sunrpc.rdma_max_inline_write="$w" sunrpc.rdma_max_inline_read="$r" || return 1
	mkdir -p /mnt/nfs
	if [ "$vers" = 3 ]; then src="$SRV:/export" opts="rdma,port=20049,vers=3,nolock"; else src="$SRV:/" opts="rdma,port=20049,vers=$vers"; fi
	if [ "$drop" != 0 ]; then
		# Every DROP-th RoCEv2 packet the client receives is dropped by
		# tc at ingress, after tcpdump saw it (packet taps run before
		# ingress tc): the capture holds it, the client's rxe never gets
		# it, so the loss shows (NAK PSN Sequence Error, resends). At
		# egress a drop is invisible: tcpdump taps after tc, and the
		# resend looks like the first copy. gact's deterministic mode
		# drops by count, not at random.
		tc qdisc add dev "$IF" clsact || return 1
		tc filter add dev "$IF" ingress protocol ip u32 match ip protocol 17 0xff match ip dport 4791 0xffff \
			action gact ok random determ drop "$drop" || { tc qdisc del dev "$IF" clsact; return 1; }
	fi
	mount -t nfs -o "$opts" "$src" /mnt/nfs || rc=1
	if [ $rc = 0 ]; then
		ls -la /mnt/nfs /mnt/nfs/dir && cat /mnt/nfs/hello.txt || rc=1
		umount /mnt/nfs || rc=1
	fi
	if [ "$drop" != 0 ]; then
		tc -s filter show dev "$IF" ingress
		tc qdisc del dev "$IF" clsact
	fi
	[ $rc = 0 ] || return 1
	sleep 1
}

# nfsbulk: bulk data over the same kernel NFS mount (default inline
# sizes): the client writes SIZE octets to a new file with O_DIRECT in one
# write(2) (an NFS WRITE whose data the server pulls with RDMA Reads: a read
# chunk), reads them back with O_DIRECT (an NFS READ the server pushes with
# RDMA Writes: a write chunk; O_DIRECT keeps the page cache from answering
# it), compares, and lists a directory of 64 long names (a READDIR reply
# larger than the 4 KiB inline receive: a reply chunk).
server_nfsbulk() { # server_nfsbulk NAME VERS SIZE
	local i
	nfs_server_start || return 1
	echo "$svc_default" >/proc/sys/sunrpc/svc_rdma/max_req_size
	if [ ! -d /export/many ]; then
		mkdir -p /export/many || return 1
		for i in $(seq -w 1 64); do : >"/export/many/cmpd-dissect-live-lab-directory-entry-with-a-long-name-$i"; done
	fi
	rm -f "/export/bulk-$1"
	signal "$1.ready"
	await "$1.client-done" 120
}
client_nfsbulk() { # client_nfsbulk NAME VERS SIZE
	local name=$1 vers=$2 size=$3 src opts rc=0
	sysctl -qw sunrpc.rdma_max_inline_write="$cli_default_w" sunrpc.rdma_max_inline_read="$cli_default_r" || return 1
	# A pattern that names its offset every 16 octets, so a misplaced
	# chunk segment shows in the capture.
	awk -v n="$size" 'BEGIN { for (o = 0; o < n; o += 16) printf "bulk %010d\n", o }' | head -c "$size" >/tmp/bulk.out
	[ "$(stat -c %s /tmp/bulk.out)" = "$size" ] || return 1
	mkdir -p /mnt/nfs
	if [ "$vers" = 3 ]; then src="$SRV:/export" opts="rdma,port=20049,vers=3,nolock"; else src="$SRV:/" opts="rdma,port=20049,vers=$vers"; fi
	mount -t nfs -o "$opts" "$src" /mnt/nfs || return 1
	grep ' /mnt/nfs ' /proc/mounts
	dd if=/tmp/bulk.out of="/mnt/nfs/bulk-$name" bs="$size" count=1 oflag=direct || rc=1
	dd if="/mnt/nfs/bulk-$name" of=/tmp/bulk.in bs="$size" count=1 iflag=direct || rc=1
	cmp /tmp/bulk.out /tmp/bulk.in || rc=1
	ls -l /mnt/nfs/many | wc -l
	umount /mnt/nfs || rc=1
	rm -f /tmp/bulk.out /tmp/bulk.in
	[ $rc = 0 ] || return 1
	sleep 1
}

# nfsrefused: the mount is expected to fail (the server refuses every
# connection); the client gives it SECS seconds, then kills it, and the
# capture holds every attempt.
server_nfsrefused() { # server_nfsrefused NAME VERS SECS
	server_nfs "$1" "$2" 0 0 0
}
client_nfsrefused() {
	local name=$1 vers=$2 secs=$3 src opts
	sysctl -qw sunrpc.rdma_max_inline_write="$cli_default_w" sunrpc.rdma_max_inline_read="$cli_default_r" || return 1
	mkdir -p /mnt/nfs
	if [ "$vers" = 3 ]; then src="$SRV:/export" opts="rdma,port=20049,vers=3,nolock"; else src="$SRV:/" opts="rdma,port=20049,vers=$vers"; fi
	if timeout -s KILL "$secs" mount -t nfs -o "$opts" "$src" /mnt/nfs; then
		echo "the mount was expected to be refused, and succeeded"
		umount /mnt/nfs
		return 1
	fi
	sleep 1
}

# disk_image FILE: the 1 MiB block device the NVMe-oF and iSER targets
# export, a known text repeated, so a read shows which bytes it carried.
disk_image() {
	[ -e "$1" ] && return 0
	yes "cmpd-dissect live lab block device" | head -c 1048576 >"$1"
}
# await_listen PORT: until an rdma_cm ID listens on PORT (rdma resource
# show cm_id lists it with state LISTEN).
await_listen() {
	local i=0
	{ set +x; } 2>/dev/null
	until rdma resource show cm_id 2>/dev/null | grep -qE "state LISTEN.*:$1( |$)"; do
		i=$((i + 1))
		[ $i -gt 200 ] && { rdma resource show cm_id; set -x; return 1; }
		sleep 0.1
	done
	set -x
}

# NVMe-oF: the kernel target (nvmet, nvmet-rdma) exports a file-backed
# namespace through configfs; the kernel host (nvme-rdma) connects with
# nvme-cli (admin queue and one I/O queue), reads 4 KiB with O_DIRECT and
# disconnects.
NQN=nqn.2026-11.org.example:cmpd-dissect
HOSTNQN=nqn.2026-11.org.example:cmpd-dissect-host
HOSTID=5e1f0c2a-7c3d-4b8e-9a61-0d2b3c4e5f60
configfs_up() {
	modprobe configfs || return 1
	mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
}
nvmet_port=0
server_nvme() { # server_nvme NAME
	local name=$1 cfs=/sys/kernel/config/nvmet sub port
	modprobe nvmet && modprobe nvmet-rdma && configfs_up || return 1
	disk_image /tmp/disk.img || return 1
	sub=$cfs/subsystems/$NQN
	if [ ! -d "$sub" ]; then
		mkdir "$sub" && echo 1 >"$sub/attr_allow_any_host" && mkdir "$sub/namespaces/1" &&
			echo /tmp/disk.img >"$sub/namespaces/1/device_path" &&
			echo 1 >"$sub/namespaces/1/buffered_io" && # tmpfs has no O_DIRECT in 6.1
			echo 1 >"$sub/namespaces/1/enable" || return 1
	fi
	nvmet_port=$((nvmet_port + 1))
	port=$cfs/ports/$nvmet_port
	mkdir "$port" && echo rdma >"$port/addr_trtype" &&
		echo "ipv$([ "${SRV#*:}" = "$SRV" ] && echo 4 || echo 6)" >"$port/addr_adrfam" &&
		echo "$SRV" >"$port/addr_traddr" && echo 4420 >"$port/addr_trsvcid" &&
		ln -s "$sub" "$port/subsystems/$NQN" || return 1
	await_listen 4420 || return 1
	signal "$name.ready"
	await "$name.client-done" 120
	rm "$port/subsystems/$NQN" && rmdir "$port"
}
# read_lab_disk GLOB TRIES NAME: waits up to TRIES tenths of a second for
# a block device matching GLOB, reads its first 4 KiB with O_DIRECT into
# /tmp/NAME.read and fails unless they hold the lab's marker (disk_image).
read_lab_disk() {
	local dev i=0
	until dev=$(ls $1 2>/dev/null | head -1) && [ -n "$dev" ]; do
		i=$((i + 1)); [ $i -gt "$2" ] && return 1
		sleep 0.1
	done
	udevadm settle 2>/dev/null
	dd if="$dev" of="/tmp/$3.read" bs=4096 count=1 iflag=direct && grep -q "cmpd-dissect live lab" "/tmp/$3.read"
}
client_nvme() { # client_nvme NAME
	local rc=0
	modprobe nvme-rdma || return 1
	nvme connect -t rdma -a "$SRV" -s 4420 -n "$NQN" -q "$HOSTNQN" -I "$HOSTID" -i 1 || return 1
	read_lab_disk '/dev/nvme[0-9]*n1' 100 nvme || rc=1
	nvme disconnect -n "$NQN" || rc=1
	sleep 0.5
	return $rc
}

# iSER: the LIO target (iscsi_target_mod with ib_isert) exports the same
# kind of file through configfs on a portal with iSER on; open-iscsi's
# iscsid logs in over its built-in "iser" iface (ib_iser), the client
# reads 4 KiB with O_DIRECT and logs out.
IQN=iqn.2026-11.org.example:cmpd-dissect
lio_np=
server_iser() { # server_iser NAME
	local name=$1 t=/sys/kernel/config/target tpg np
	for m in target_core_mod target_core_file iscsi_target_mod ib_isert; do modprobe $m || return 1; done
	configfs_up || return 1
	disk_image /tmp/disk.img || return 1
	tpg=$t/iscsi/$IQN/tpgt_1
	if [ ! -d "$tpg" ]; then
		mkdir -p "$t/core/fileio_0/disk0" &&
			echo "fd_dev_name=/tmp/disk.img,fd_dev_size=1048576" >"$t/core/fileio_0/disk0/control" &&
			echo 1 >"$t/core/fileio_0/disk0/enable" &&
			mkdir -p "$tpg/lun/lun_0" && ln -s "$t/core/fileio_0/disk0" "$tpg/lun/lun_0/disk0" &&
			echo 0 >"$tpg/attrib/authentication" && echo 1 >"$tpg/attrib/generate_node_acls" &&
			echo 1 >"$tpg/attrib/cache_dynamic_acls" && echo 0 >"$tpg/attrib/demo_mode_write_protect" || return 1
	fi
	if [ "${SRV#*:}" = "$SRV" ]; then np=$tpg/np/$SRV:3260; else np=$tpg/np/[$SRV]:3260; fi
	mkdir "$np" && echo 1 >"$np/iser" && echo 1 >"$tpg/enable" || return 1
	await_listen 3260 || return 1
	signal "$name.ready"
	await "$name.client-done" 120
	echo 0 >"$tpg/enable"
	rmdir "$np"
}
client_iser() { # client_iser NAME
	local rc=0 node
	for m in ib_iser sd_mod; do modprobe $m || return 1; done
	mkdir -p /etc/iscsi /var/lib/iscsi /run/lock/iscsi
	echo "InitiatorName=iqn.2026-11.org.example:cmpd-dissect-initiator" >/etc/iscsi/initiatorname.iscsi
	pgrep -x iscsid >/dev/null || iscsid || return 1
	node=(-m node -T "$IQN" -p "$SRV:3260" -I iser)
	[ "${SRV#*:}" = "$SRV" ] || node=(-m node -T "$IQN" -p "[$SRV]:3260" -I iser)
	iscsiadm "${node[@]}" -o new || return 1
	iscsiadm "${node[@]}" --login || return 1
	read_lab_disk '/dev/sd[a-z]' 200 iser || rc=1
	iscsiadm "${node[@]}" --logout || rc=1
	iscsiadm "${node[@]}" -o delete
	sleep 0.5
	return $rc
}

# rping (rdmacm-utils): COUNT ping-pongs of SIZE octets (a Send carrying
# the buffer's address, key and length, an RDMA Read, a Send, an RDMA
# Write), no private data.
server_rping() { # server_rping NAME COUNT SIZE
	rping -s -a "$SRV" -C "$2" -S "$3" &
	local pid=$!
	await_listen 7174 || { kill $pid; return 1; }
	signal "$1.ready"
	wait $pid
}
client_rping() {
	rping -c -a "$SRV" -C "$2" -S "$3" -v
}

# perftest over rdma_cm (-R): PROGRAM ITERS SIZE (ib_send_bw, ib_write_bw).
server_perftest() { # server_perftest NAME PROGRAM ITERS SIZE
	"$2" -R -d "$DEV" -n "$3" -s "$4" &
	local pid=$!
	await_listen 18515 || { kill $pid; return 1; }
	signal "$1.ready"
	wait $pid
}
client_perftest() {
	"$2" -R -d "$DEV" -n "$3" -s "$4" "$SRV"
}

# siw_swap KO: replace siw0 by the siw module at path KO (the variant
# build, or "default" for the standard one).
siw_swap() {
	rdma link delete siw0 || return 1
	rmmod siw || return 1
	if [ "$1" = default ]; then modprobe siw; else insmod "$1"; fi || return 1
	rdma link add siw0 type siw netdev eth1 || return 1
	rdma link show
}

fails=0
scenario() { # scenario NAME LINK FAMILY KIND ARGS…
	local name=$1 link=$2 fam=$3 kind=$4 t0 rc=0
	shift 4
	if [ -n "$ONLY" ] && ! [[ $name =~ $ONLY ]]; then return 0; fi
	addresses "$link" "$fam" "$(kind_port "$kind")"
	t0=$(date +%s.%N)
	echo "=== scenario $name ($ROLE)"
	if [ "$kind" = siwmod ]; then # both VMs (or the one named) swap siw; no capture
		local other=$([ $ROLE = client ] && echo server || echo client) ko=$1 only=${2:-}
		[ "$ko" = variant ] && ko=$SIW_VARIANT
		[ "$ko" = mpa1 ] && ko=$SIW_MPA1
		if [ -n "$only" ] && [ "$only" != $ROLE ]; then
			signal "$name.ok-$ROLE"
		else
			siw_swap "$ko" && signal "$name.ok-$ROLE" || signal "$name.failed-$ROLE"
		fi
		await "$name.ok-$other" 60 || rc=1
		[ -e "/live/ctl/$name.ok-$ROLE" ] || rc=1
		if [ $ROLE = client ]; then
			local secs=$(echo "$(date +%s.%N) - $t0" | bc)
			if [ $rc = 0 ]; then
				printf 'ok   %-24s %5.1fs\n' "$name" "$secs" >>/live/progress
			else
				printf 'FAIL %-24s %5.1fs (see client.log, server.log)\n' "$name" "$secs" >>/live/progress
				fails=$((fails + 1))
			fi
		fi
		return 0
	fi
	if [ $ROLE = server ]; then
		"server_$kind" "$name" "$@" || { rc=1; signal "$name.ready"; }
		[ $rc = 0 ] && signal "$name.server-ok" || signal "$name.server-failed"
		await "$name.done" 120
		return 0
	fi
	await "$name.ready" 120 || rc=1
	[ $rc = 0 ] && { capture_start "$name" || rc=1; }
	[ $rc = 0 ] && { "client_$kind" "$name" "$@" || rc=1; }
	[[ $kind == nfs* || $kind == nvme || $kind == iser ]] && signal "$name.client-done"
	{ set +x; } 2>/dev/null
	until [ -e "/live/ctl/$name.server-ok" ] || [ -e "/live/ctl/$name.server-failed" ]; do
		sleep 0.1
		[ "$(date +%s)" -gt $((${t0%.*} + 120)) ] && { echo "timeout waiting for the server's $name"; break; }
	done
	set -x
	[ -e "/live/ctl/$name.server-ok" ] || rc=1
	[ -n "$TCPDUMP" ] && { capture_stop "$name" || rc=1; }
	TCPDUMP=
	local secs=$(echo "$(date +%s.%N) - $t0" | bc)
	if [ $rc = 0 ]; then
		: >"/live/out/live-$name.ok"
		printf 'ok   %-24s %5.1fs\n' "$name" "$secs" >>/live/progress
	else
		printf 'FAIL %-24s %5.1fs (see %s.log)\n' "$name" "$secs" "$ROLE" >>/live/progress
		fails=$((fails + 1))
	fi
	signal "$name.done"
}

[ -r "$SCENARIOS" ] || step "scenario file $SCENARIOS" false
. "$SCENARIOS"
echo "guest $ROLE: finished, $fails failed"
[ $ROLE = client ] && echo "END $fails" >>/live/progress
exit 0
