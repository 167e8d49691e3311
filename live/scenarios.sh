# The live-traces scenarios, one line each, read by live/guest.sh in both
# VMs (client and server run the same list in the same order).
#
#   scenario NAME LINK FAMILY KIND ARGS…
#
# NAME    capture name: testdata/pcaps/real/live-NAME.pcap
# LINK    rxe (soft-RoCE on eth0, RoCEv2, UDP 4791) or siw (soft-iWARP on eth1, TCP)
# FAMILY  4 or 6
# KIND    replay: cmpd-dissect replay, both sides given ARGS
#         siwmod: both VMs replace siw0 by another siw module (ARGS: variant,
#                 the build with MPA CRC, peer-to-peer and GSO on; mpa1, the
#                 build that sends MPA revision 1; or default), or only the
#                 VM named after it (client, server); no capture
#         nfs:    kernel NFS over RDMA; ARGS = vers (3|4.2) client_inline_write
#                 client_inline_read server_max_req_size (0 = leave the default)
#                 [drop: the client drops every drop-th RoCEv2 packet it
#                 receives, at tc ingress after the capture saw it]
#         nfsbulk: kernel NFS over RDMA, default inline sizes; ARGS = vers
#                 size: an O_DIRECT write then read of size octets (read
#                 and write chunks) and a 64-entry directory listing
#                 (reply chunk)
#         nfsrefused: a kernel NFS mount the server refuses; ARGS = vers SECS
#                 (the client kills the mount after SECS seconds)
#         nvme:   NVMe-oF: nvmet-rdma target (configfs, a 1 MiB file-backed
#                 namespace), nvme-cli connect (one I/O queue), a 4 KiB read,
#                 disconnect; rdma_cm port 4420
#         iser:   iSER: LIO target (configfs, a 1 MiB fileio LUN, portal with
#                 iser on), open-iscsi login over its iser iface, a 4 KiB
#                 read, logout; rdma_cm port 3260
#         rping:  rping -s / rping -c; ARGS = count size; port 7174
#         perftest: perftest over rdma_cm (-R); ARGS = program iters size;
#                 port 18515
# CAPIF=IF before "scenario" makes tcpdump capture on IF (any: Linux cooked
# capture) instead of the link's netdev, CAPLINK=DLT gives tcpdump -y DLT,
# CAPBUF=KiB tcpdump -B KiB (its ring buffer), CAPSNAP=N tcpdump -s N.
#
# RFC 8797 messages used (f6ab0e18 = Format Identifier, then version, flags
# (R = 0x01), send size, receive size; size byte v = (v+1) KiB):
V1_R_1K_256K=f6ab0e18010100ff   # v1, R=1, send 1 KiB, receive 256 KiB
V1_256K_1K=f6ab0e180100ff00     # v1, R=0, send 256 KiB, receive 1 KiB
V1_R_4K=f6ab0e1801010303        # v1, R=1, 4 KiB / 4 KiB (what Linux's client sends)
V1_4K=f6ab0e1801000303          # v1, R=0, 4 KiB / 4 KiB (what Linux's server sends)
V2_R_4K=f6ab0e1802010303        # version 2: not recognised by RFC 8797 readers
V2_4K=f6ab0e1802000303
OFF4=deadbeeff6ab0e1801010707   # identifier at ULP offset 4 (8 KiB / 8 KiB)
OFF8=0000000000000000f6ab0e1801000707 # identifier at ULP offset 8
GARBAGE_C=5a3cc3a5e10f1e2d3c4b5a69788796a5 # no identifier anywhere
GARBAGE_S=0123456789abcdef
OVERRUN=f6ab0e1801     # identifier and version, message cut after 5 octets
RECON2_C=f6ab0e1801000f0f      # reconnection: changed values (16 KiB / 16 KiB, R=0)
RECON2_S=f6ab0e1801001f1f      # (32 KiB / 32 KiB)
REDRIVE=/live/redrive-source.pcap # testdata/pcaps/real/rxe-nfs42-rdma.pcap, copied by live-traces.sh

for l in rxe siw; do
	scenario $l"4-rfc8797" $l 4 replay --client-pd $V1_R_1K_256K --server-pd $V1_256K_1K
	scenario $l"4-rinv" $l 4 replay --client-pd $V1_R_4K --server-pd $V1_R_4K
	scenario $l"4-v2" $l 4 replay --client-pd $V2_R_4K --server-pd $V2_4K
	scenario $l"4-offset" $l 4 replay --client-pd $OFF4 --server-pd $OFF8
	scenario $l"4-garbage" $l 4 replay --client-pd $GARBAGE_C --server-pd $GARBAGE_S
	scenario $l"4-none" $l 4 replay --client-pd "" --server-pd ""
	scenario $l"4-overrun" $l 4 replay --client-pd $OVERRUN --server-pd $OVERRUN
	scenario $l"4-reject" $l 4 replay --client-pd $V1_R_4K --server-pd $V1_4K --reject
	scenario $l"4-reconnect" $l 4 replay --client-pd $V1_R_4K --server-pd $V1_4K --client-pd $RECON2_C --server-pd $RECON2_S
	scenario $l"4-redrive" $l 4 replay --from $REDRIVE --conn 1
	scenario $l"6-rfc8797" $l 6 replay --client-pd $V1_R_1K_256K --server-pd $V1_256K_1K
	scenario $l"6-offset" $l 6 replay --client-pd $OFF4 --server-pd $OFF8
	scenario $l"6-reject" $l 6 replay --client-pd $V1_R_4K --server-pd $V1_4K --reject
done
# RNR NAK: the client posts one Send (an NFSv4 NULL call) once connected; the
# replay server never posts a receive buffer, so its rxe answers RNR NAK and
# the client's rxe retries after the RNR timer until it disconnects 1.5 s later.
scenario rxe4-rnr-nfsnull rxe 4 replay --client-pd $V1_R_4K --server-pd $V1_4K --send-null --hold 1500ms
# siw built with MPA CRC required, peer-to-peer (RTR) and GSO on, swapped
# in after the plain replays and out again before the kernel NFS scenarios.
# The replay comes before any NFS scenario: once nfsd listens on rdma_cm
# port 20049 (all devices), the replay server cannot bind it.
scenario siw4-crc-setup siw 4 siwmod variant
scenario siw4-crc-rfc8797 siw 4 replay --client-pd $V1_R_1K_256K --server-pd $V1_256K_1K
scenario siw4-crc-nfs42 siw 4 nfs 4.2 0 0 0
scenario siw4-crc-teardown siw 4 siwmod default
for l in rxe siw; do
	scenario $l"4-nfs3" $l 4 nfs 3 0 0 0
	scenario $l"4-nfs42" $l 4 nfs 4.2 0 0 0
	scenario $l"4-nfs3-inline" $l 4 nfs 3 1024 2048 8192
	scenario $l"4-nfs42-inline" $l 4 nfs 4.2 2048 1024 16384
done
# Bulk data: 256 KiB written and read back with O_DIRECT (rsize = wsize =
# 128 KiB: two NFS WRITEs with read chunks, two NFS READs with write chunks),
# and a READDIR whose reply needs a reply chunk. A 64 MiB capture ring and a
# 64 KiB snapshot length (no frame is that long: nothing is cut) so tcpdump
# keeps up with the burst.
for l in rxe siw; do
	CAPBUF=65536 CAPSNAP=65535 scenario $l"4-nfs3-bulk" $l 4 nfsbulk 3 262144
	CAPBUF=65536 CAPSNAP=65535 scenario $l"4-nfs42-bulk" $l 4 nfsbulk 4.2 262144
done
# Packet loss: every 7th RoCEv2 packet the client receives is dropped after
# tcpdump saw it: the client's rxe NAKs the gap (PSN Sequence Error) and the
# server resends, or a lost ACK makes the client resend.
scenario rxe4-nfs42-drop rxe 4 nfs 4.2 0 0 0 7
# An MPA revision 1 client (the siw build that sends revision 1, in the
# client VM only) mounting the Linux NFS server: revision 1 carries no
# IRD/ORD, the server refuses, the client retries until the mount is killed.
scenario siw4-mpa1-setup siw 4 siwmod mpa1 client
scenario siw4-mpa1-nfs42 siw 4 nfsrefused 4.2 30
scenario siw4-mpa1-teardown siw 4 siwmod default client
# Linux cooked capture: tcpdump -i any in the client VM (LINUX_SLL2, the
# default of tcpdump 4.99 with libpcap 1.10; -y LINUX_SLL for the older
# header) during the NFSv4.2 mount: the same exchange as the *-nfs42 ones.
CAPIF=any scenario rxe4-nfs42-any rxe 4 nfs 4.2 0 0 0
CAPIF=any CAPLINK=LINUX_SLL scenario siw4-nfs42-sll siw 4 nfs 4.2 0 0 0
# Other upper layers of the kernel and rdma-core: NVMe-oF (nvmet-rdma
# target, nvme-rdma host), iSER (LIO with ib_isert, open-iscsi with
# ib_iser), rping and perftest (-R: rdma_cm) traffic.
# iSER on rxe only: on iWARP the LIO portal's iSCSI/TCP listener and
# ib_isert's rdma_cm listener both need the kernel TCP port (siw listens
# with a real socket, no port mapper), so rdma_listen fails with
# EADDRINUSE.
scenario rxe4-iser rxe 4 iser
scenario rxe6-iser rxe 6 iser
for l in rxe siw; do
	scenario $l"4-nvme" $l 4 nvme
	scenario $l"4-rping" $l 4 rping 3 64
	scenario $l"4-perftest-send" $l 4 perftest ib_send_bw 5 64
	scenario $l"4-perftest-write" $l 4 perftest ib_write_bw 5 64
done
# NVMe-oF over IPv6: the rdma_cm header's IPv6 addresses (RoCE), TCP over
# IPv6 (iWARP).
scenario rxe6-nvme rxe 6 nvme
scenario siw6-nvme siw 6 nvme
