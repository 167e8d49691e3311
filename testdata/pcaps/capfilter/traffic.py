import socket, struct, time, sys
def udp(addr, port, size=20, fam=socket.AF_INET):
    s = socket.socket(fam, socket.SOCK_DGRAM); s.sendto(b'x'*size, (addr, port)); s.close()
def tcp(addr, port, fam=socket.AF_INET):
    s = socket.socket(fam, socket.SOCK_STREAM); s.settimeout(1)
    try:
        s.connect((addr, port)); s.send(b'hello rdma'); time.sleep(0.05)
    except Exception as e: pass
    s.close()
def csum(b):
    if len(b)%2: b+=b'\0'
    s=sum(struct.unpack('!%dH'%(len(b)//2), b)); s=(s>>16)+(s&0xffff); s+=s>>16; return ~s&0xffff
def icmp(addr, seq):
    s=socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    h=struct.pack('!BBHHH',8,0,0,0x1234,seq)+b'ping'*8
    h=h[:2]+struct.pack('!H',csum(h))+h[4:]; s.sendto(h,(addr,0)); time.sleep(0.05); s.close()
def icmp6(addr, seq):
    s=socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
    s.sendto(struct.pack('!BBHHH',128,0,0,0x1234,seq)+b'ping6', (addr,0)); time.sleep(0.05); s.close()
for v4, v6 in [('192.0.2.2','2001:db8:9::2')]:
    icmp(v4, 1)
    for p in (4791, 4792, 22, 20049): udp(v4, p)
    udp(v4, 4791, 3000)        # IPv4 fragments
    tcp(v4, 20049); tcp(v4, 22)
    if v6:
        icmp6(v6, 1)
        for p in (4791, 22): udp(v6, p, fam=socket.AF_INET6)
        udp(v6, 4791, 3000, fam=socket.AF_INET6)   # IPv6 fragment headers
        tcp(v6, 20049, fam=socket.AF_INET6)
    time.sleep(0.1)
