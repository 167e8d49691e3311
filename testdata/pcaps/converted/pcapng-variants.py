#!/usr/bin/env python3
"""Writes the pcapng and pcap layouts no tool at hand writes from a pcap
(see PROVENANCE.md), from the frames of real captures, by the layouts of
draft-ietf-opsawg-pcapng and draft-ietf-opsawg-pcap:

  be        a big-endian pcapng (Wireshark on a big-endian host: s390x,
            SPARC, POWER), options in every block
  sections  two pcapng files, one little- and one big-endian, concatenated
            (cat a.pcapng b.pcapng): two sections, with a Decryption Secrets
            Block, a block of a type nobody assigned and Interface Statistics
            between the packets
  tsresol   one section, three Ethernet interfaces with if_tsresol 10^-7,
            2^-20 and 10^-3 (and if_tsoffset), the frames going round them
  fcs       frames with their Ethernet FCS: an interface with if_fcslen 4,
            Enhanced Packet Blocks with every option (epb_flags with
            direction and FCS length, epb_dropcount, epb_hash, epb_packetid,
            epb_queue, opt_comment)
  fcspcap   a pcap whose link type field says "FCS of 32 bits present"
            (0x24000001) and whose frames carry their FCS
  lenswap   a pcap whose third record's original length is smaller than its
            captured length (writers that store the length after stripping
            a header or FCS)

Usage: pcapng-variants.py KIND OUT IN.pcap [IN2.pcap]
"""
import struct, sys, zlib


def frames(path):
    b = open(path, 'rb').read()
    magic = struct.unpack('<I', b[:4])[0]
    e = '<' if magic in (0xa1b2c3d4, 0xa1b23c4d) else '>'
    nano = magic in (0xa1b23c4d, 0x4d3cb2a1)
    off = 24
    while off + 16 <= len(b):
        ts, frac, incl, orig = struct.unpack(e + 'IIII', b[off:off + 16])
        ns = frac if nano else frac * 1000
        yield ts * 10**9 + ns, orig, b[off + 16:off + 16 + incl]
        off += 16 + incl


def pad(b):
    return b + bytes(-len(b) % 4)


class NG:
    def __init__(self, e):
        self.e, self.b = e, b''

    def opt(self, code, v):
        return struct.pack(self.e + 'HH', code, len(v)) + pad(v)

    def opts(self, *o):
        return b''.join(o) + (struct.pack(self.e + 'HH', 0, 0) if o else b'')

    def block(self, typ, body):
        body = pad(body)
        n = len(body) + 12
        self.b += struct.pack(self.e + 'II', typ, n) + body + struct.pack(self.e + 'I', n)

    def shb(self, *o):
        self.block(0x0A0D0D0A, struct.pack(self.e + 'IHHq', 0x1A2B3C4D, 1, 0, -1) + self.opts(*o))

    def idb(self, lt, snap, *o):
        self.block(1, struct.pack(self.e + 'HHI', lt, 0, snap) + self.opts(*o))

    def epb(self, iface, ts, data, orig=None, *o):
        orig = len(data) if orig is None else orig
        self.block(6, struct.pack(self.e + 'IIIII', iface, ts >> 32, ts & 0xffffffff, len(data), orig) + pad(data) + self.opts(*o))

    def isb(self, iface, ts, recv, drop):
        self.block(5, struct.pack(self.e + 'III', iface, ts >> 32, ts & 0xffffffff) +
                   self.opts(self.opt(4, struct.pack(self.e + 'Q', recv)), self.opt(5, struct.pack(self.e + 'Q', drop))))

    def u64(self, v):
        return struct.pack(self.e + 'Q', v)

    def u32(self, v):
        return struct.pack(self.e + 'I', v)


def app(ng):
    return (ng.opt(2, b'x86_64'), ng.opt(3, b'Linux 6.1.0'), ng.opt(4, b'pcapng-variants.py'))


def be(src):
    w = NG('>')
    w.shb(w.opt(1, b'big-endian section'), *app(w))
    w.idb(1, 262144, w.opt(2, b'eth0'), w.opt(9, bytes([9])), w.opt(12, b'Linux 6.1.0'))
    fr = list(frames(src))
    for ts, orig, data in fr:
        w.epb(0, ts, data, orig)
    w.isb(0, fr[-1][0], len(fr), 0)
    return w.b


def sections(a, b):
    w = NG('<')
    w.shb(*app(w))
    w.idb(1, 262144, w.opt(2, b'rxe0'))
    fa = list(frames(a))
    for i, (ts, orig, data) in enumerate(fa):
        w.epb(0, ts // 1000, data, orig)
        if i == 0:
            # Decryption Secrets (a TLS key log), a block type nobody
            # assigned.
            w.block(0x0A, w.u32(0x544c534b) + w.u32(12) + b'CLIENT_RANDO')
            w.block(0x0BADBEEF, b'unknown')
    w.isb(0, fa[-1][0] // 1000, len(fa), 0)
    v = NG('>')
    v.shb(*app(v))
    v.idb(1, 0, v.opt(2, b'siw0'), v.opt(9, bytes([9])))
    fb = list(frames(b))
    for ts, orig, data in fb:
        v.epb(0, ts, data, orig)
    v.isb(0, fb[-1][0], len(fb), 0)
    return w.b + v.b


def tsresol(src):
    w = NG('<')
    w.shb(*app(w))
    fr = list(frames(src))
    base = fr[0][0] // 10**9 - 100
    # 10^-7 (Windows' 100 ns ticks), 2^-20 from an offset of base seconds,
    # milliseconds from the same offset.
    w.idb(1, 262144, w.opt(2, b'ticks'), w.opt(9, bytes([7])))
    w.idb(1, 262144, w.opt(2, b'binary'), w.opt(9, bytes([0x80 | 20])), w.opt(14, w.u64(base)))
    w.idb(1, 262144, w.opt(2, b'millis'), w.opt(9, bytes([3])), w.opt(14, w.u64(base)))
    for i, (ts, orig, data) in enumerate(fr):
        k = i % 3
        if k == 0:
            t = ts // 100
        elif k == 1:
            t = ((ts - base * 10**9) << 20) // 10**9
        else:
            t = (ts - base * 10**9) // 10**6
        w.epb(k, t, data, orig)
    return w.b


def fcs(src):
    w = NG('<')
    w.shb(*app(w))
    w.idb(1, 262144, w.opt(2, b'eth0'), w.opt(13, bytes([4])))
    for i, (ts, orig, data) in enumerate(frames(src)):
        f = data + struct.pack('<I', zlib.crc32(data))
        # epb_flags: direction (1 inbound, 2 outbound), reception type
        # unicast (1 << 2), FCS length 4 (bits 5-8).
        flags = (1 + i % 2) | 1 << 2 | 4 << 5
        o = [w.opt(2, w.u32(flags)), w.opt(4, w.u64(i)), w.opt(5, w.u64(1000 + i)), w.opt(6, w.u32(i % 4)),
             w.opt(3, bytes([2]) + struct.pack('>I', zlib.crc32(f)))]
        if i == 1:
            o.append(w.opt(1, b'frame with every EPB option'))
        w.epb(0, ts // 1000, f, orig + 4, *o)
    return w.b


def pcap_header(lt):
    return struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 262144, lt)


def fcspcap(src):
    b = pcap_header(0x24000001)
    for ts, orig, data in frames(src):
        f = data + struct.pack('<I', zlib.crc32(data))
        b += struct.pack('<IIII', ts // 10**9, ts % 10**9 // 1000, len(f), orig + 4) + f
    return b


def lenswap(src):
    b = pcap_header(1)
    for i, (ts, orig, data) in enumerate(frames(src)):
        if i == 2:
            orig = 60
        b += struct.pack('<IIII', ts // 10**9, ts % 10**9 // 1000, len(data), orig) + data
    return b


kind, out = sys.argv[1:3]
ins = sys.argv[3:]
with open(out, 'wb') as f:
    f.write(globals()[kind](*ins))
