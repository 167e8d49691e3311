#!/usr/bin/env python3
"""Writes a LINKTYPE_ERF pcap (197) the way ERF producers lay records out,
from the frames of existing captures (see PROVENANCE.md):

  - the Ethernet frames of an Ethernet pcap as ERF type 2 records: 2 octets
    of offset and pad, the frame and its FCS (CRC-32), wlen counting the FCS;
  - the InfiniBand packets of an ERF pcap (type 21, ibdump's) again as type 21;
  - one ATM record (type 3) and one padding record (type 48), which are not
    packets this program dissects.

Fixed-length records (no varying-length flag) have rlen padded to a multiple
of 8; the pcap record stores the record without that padding, as the issue
reports for ibdump-style files. Usage: erf-records.py OUT ETH.pcap ERF.pcap
"""
import struct, sys, zlib

def frames(path):
    b = open(path, 'rb').read()
    e = '<' if struct.unpack('<I', b[:4])[0] in (0xa1b2c3d4, 0xa1b23c4d) else '>'
    off = 24
    while off + 16 <= len(b):
        ts, tu, incl, orig = struct.unpack(e + 'IIII', b[off:off + 16])
        yield ts, tu, b[off + 16:off + 16 + incl]
        off += 16 + incl

def record(ts, tu, typ, body, wlen, flags=0):
    rlen = 16 + len(body)
    rlen += -rlen % 8  # padded, not stored
    erf_ts = (ts << 32) + (tu * (1 << 32)) // 1000000
    hdr = struct.pack('<Q', erf_ts) + struct.pack('>BBHHH', typ, flags, rlen, 0, wlen)
    rec = hdr + body
    return struct.pack('<IIII', ts, tu, len(rec), len(rec)) + rec

out, eth, erf = sys.argv[1:4]
recs = []
for ts, tu, f in frames(eth):
    fcs = struct.pack('<I', zlib.crc32(f) & 0xffffffff)
    recs.append((ts, tu, record(ts, tu, 2, b'\0\0' + f + fcs, len(f) + 4)))
for i, (ts, tu, r) in enumerate(frames(erf)):
    ib = r[16:]
    recs.append((ts, tu, record(ts, tu, 21, ib, len(ib), flags=0)))
    if i == 1:
        recs.append((ts, tu + 1, record(ts, tu + 1, 3, bytes(52), 52)))
        recs.append((ts, tu + 2, record(ts, tu + 2, 48, bytes(24), 24)))
with open(out, 'wb') as w:
    w.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 197))
    for _, _, r in recs:
        w.write(r)
