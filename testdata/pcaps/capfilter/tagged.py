# Sends real RoCEv2 and iWARP frames (from the repository's captures) out of cfa0 wrapped in
# 802.1Q, 802.1ad+802.1Q (QinQ) and 0x9100 tags, as a switch trunk port would carry them.
import socket, struct, sys, time
def frames(path, n):
    d=open(path,'rb').read(); off=24; out=[]
    while off < len(d) and len(out) < n:
        caplen=struct.unpack('<I', d[off+8:off+12])[0]; out.append(d[off+16:off+16+caplen]); off+=16+caplen
    return out
s=socket.socket(socket.AF_PACKET, socket.SOCK_RAW); s.bind(('cfa0',0))
root=sys.argv[1]
fs=frames(root+'/real/live-rxe4-nfs42.pcap', 3)+frames(root+'/real/live-siw4-nfs42.pcap', 3)+frames(root+'/real/live-rxe6-rfc8797.pcap', 2)
def tag(tpid, vid, prio=3): return struct.pack('!HH', tpid, prio<<13 | vid)
for f in fs:
    for tags in ([tag(0x8100,100)], [tag(0x88a8,200), tag(0x8100,300)], [tag(0x9100,400)], [tag(0x8100,100,0), tag(0x8100,7)]):
        s.send(f[:12]+b''.join(tags)+f[12:]); time.sleep(0.002)
