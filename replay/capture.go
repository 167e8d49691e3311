package replay

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// Conn is one connection attempt found in a capture: what each side put in
// its connection private data, as it must be handed to librdmacm to send the
// same bytes again.
type Conn struct {
	// N is the 1-based number of the connection in request order.
	N int `json:"conn"`
	// Transport is "rocev2" or "iwarp".
	Transport string `json:"transport"`
	// Client and Server are the IP addresses of the two peers.
	Client string `json:"client"`
	Server string `json:"server"`
	// Port is the rdma_cm port: the low 16 bits of the REQ's service ID
	// (port space TCP) on RoCE, the TCP destination port on iWARP.
	Port int `json:"port"`
	// RequestFrame and ReplyFrame are the frames of the REQ / MPA Request
	// and of the REP, REJ or MPA Reply (0 when absent).
	RequestFrame int `json:"request_frame"`
	ReplyFrame   int `json:"reply_frame"`
	// ClientPrivateData is the ULP private data of the request: after the
	// 36-byte rdma_cm header on RoCE (56 octets, the REQ's fixed size,
	// zero padding included), after the MPA v2 IRD/ORD words on iWARP.
	ClientPrivateData HexBytes `json:"client_private_data"`
	// ServerPrivateData is the reply's (REP 196 octets, REJ 148 on RoCE;
	// the MPA Reply's ULP data on iWARP), nil when there was no reply.
	ServerPrivateData HexBytes `json:"server_private_data"`
	// Rejected reports a REJ or an MPA Reply with the Reject flag.
	Rejected bool `json:"rejected"`
}

// Sizes and offsets of what Connections reads (wire-formats.md §2, §3, §6;
// include/rdma/ib_cm.h, drivers/infiniband/core/cma.c).
const (
	roceUDPPort     = 4791
	bthLen          = 12
	dethLen         = 8
	madHeaderLen    = 24
	madClassCM      = 0x07
	cmAttrREQ       = 0x0010
	cmAttrREJ       = 0x0012
	cmAttrREP       = 0x0013
	reqServiceIDOff = 8
	reqPDOff        = 140
	reqPDLen        = 92
	repPDOff        = 36
	repPDLen        = 196
	rejPDOff        = 84
	rejPDLen        = 148
	cmaHeaderLen    = 36
	opUDSendOnly    = 0x64
	psTCP           = 0x0106

	mpaKeyLen     = 16
	mpaHeaderLen  = 20
	mpaFlagReject = 0x20
	mpaFlagEnh    = 0x10
	mpaIRDORDLen  = 4
)

var (
	mpaReqKey = []byte("MPA ID Req Frame")
	mpaRepKey = []byte("MPA ID Rep Frame")
)

// FromCapture returns connection n (1-based, in request order) of the
// capture at path.
func FromCapture(path string, n int) (Conn, error) {
	conns, err := Connections(path)
	if err != nil {
		return Conn{}, err
	}
	if n < 1 || n > len(conns) {
		return Conn{}, fmt.Errorf("%s: connection %d: the capture holds %d connection request(s)", path, n, len(conns))
	}
	return conns[n-1], nil
}

// Connections lists the connection requests of an Ethernet capture
// (RoCEv2 CM REQ and iWARP MPA Request) with their replies.
func Connections(path string) ([]Conn, error) {
	fs, err := source.OpenFiles([]string{path}, nil)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	var x extractor
	var fr source.Frame
	for {
		err := fs.Next(&fr)
		if err == io.EOF {
			break
		}
		if err != nil {
			var re *source.RecordError
			if errors.As(err, &re) {
				break // keep what the good frames gave
			}
			return nil, err
		}
		if fr.LinkType != source.LinkTypeEthernet {
			return nil, fmt.Errorf("%s: frame %d: link type %d: replay reads Ethernet captures (RoCEv2, iWARP)", path, fr.Number, fr.LinkType)
		}
		x.frame(fr.Number, fr.Data)
	}
	return x.conns, nil
}

type tcpKey struct {
	src, dst string
	sport    uint16
	dport    uint16
}

type ibKey struct {
	host string
	comm uint32
}

// extractor remembers, across frames, the connections seen so far.
type extractor struct {
	eth     layers.Ethernet
	dot1q   layers.Dot1Q
	ip4     layers.IPv4
	ip6     layers.IPv6
	udp     layers.UDP
	tcp     layers.TCP
	parser  *gopacket.DecodingLayerParser
	decoded []gopacket.LayerType

	conns   []Conn
	ibReq   map[ibKey]int  // (client, local comm ID) → index
	mpaReq  map[tcpKey]int // client→server tuple → index
	seenSeg map[tcpKey]map[uint32]bool
}

func (x *extractor) frame(number int, data []byte) {
	if x.parser == nil {
		x.parser = gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &x.eth, &x.dot1q, &x.ip4, &x.ip6, &x.udp, &x.tcp)
		x.parser.IgnoreUnsupported = true
		x.ibReq = map[ibKey]int{}
		x.mpaReq = map[tcpKey]int{}
		x.seenSeg = map[tcpKey]map[uint32]bool{}
	}
	_ = x.parser.DecodeLayers(data, &x.decoded) // a damaged frame yields what decoded
	var src, dst net.IP
	for _, t := range x.decoded {
		switch t {
		case layers.LayerTypeIPv4:
			src, dst = x.ip4.SrcIP, x.ip4.DstIP
		case layers.LayerTypeIPv6:
			src, dst = x.ip6.SrcIP, x.ip6.DstIP
		case layers.LayerTypeUDP:
			if src != nil && x.udp.DstPort == roceUDPPort {
				x.roce(number, src.String(), dst.String(), x.udp.Payload)
			}
		case layers.LayerTypeTCP:
			if src != nil {
				x.iwarp(number, src.String(), dst.String(), &x.tcp)
			}
		}
	}
}

// roce reads a RoCEv2 UD SEND carrying a CM MAD.
func (x *extractor) roce(number int, src, dst string, p []byte) {
	if len(p) < bthLen+dethLen+madHeaderLen || p[0] != opUDSendOnly {
		return
	}
	mad := p[bthLen+dethLen:]
	if mad[1] != madClassCM {
		return
	}
	attr := binary.BigEndian.Uint16(mad[16:18])
	cm := mad[madHeaderLen:]
	switch attr {
	case cmAttrREQ:
		if len(cm) < reqPDOff+reqPDLen {
			return
		}
		k := ibKey{src, binary.BigEndian.Uint32(cm[0:4])}
		if _, dup := x.ibReq[k]; dup {
			return // retransmitted REQ
		}
		sid := binary.BigEndian.Uint64(cm[reqServiceIDOff:])
		port := 0
		if sid>>16 == psTCP {
			port = int(sid & 0xffff)
		}
		x.ibReq[k] = len(x.conns)
		x.conns = append(x.conns, Conn{
			N: len(x.conns) + 1, Transport: "rocev2", Client: src, Server: dst, Port: port,
			RequestFrame:      number,
			ClientPrivateData: append(HexBytes{}, cm[reqPDOff+cmaHeaderLen:reqPDOff+reqPDLen]...),
		})
	case cmAttrREP, cmAttrREJ:
		off, n := repPDOff, repPDLen
		if attr == cmAttrREJ {
			off, n = rejPDOff, rejPDLen
		}
		if len(cm) < off+n {
			return
		}
		i, ok := x.ibReq[ibKey{dst, binary.BigEndian.Uint32(cm[4:8])}]
		if !ok || x.conns[i].ReplyFrame != 0 {
			return
		}
		c := &x.conns[i]
		c.ReplyFrame = number
		c.Rejected = attr == cmAttrREJ
		c.ServerPrivateData = append(HexBytes{}, cm[off:off+n]...)
	}
}

// iwarp reads an MPA Request or Reply at the start of a TCP segment's
// payload (Linux sends each in one segment).
func (x *extractor) iwarp(number int, src, dst string, t *layers.TCP) {
	p := t.Payload
	if len(p) < mpaHeaderLen {
		return
	}
	req := bytes.Equal(p[:mpaKeyLen], mpaReqKey)
	if !req && !bytes.Equal(p[:mpaKeyLen], mpaRepKey) {
		return
	}
	k := tcpKey{src, dst, uint16(t.SrcPort), uint16(t.DstPort)}
	if x.seenSeg[k] == nil {
		x.seenSeg[k] = map[uint32]bool{}
	}
	if x.seenSeg[k][t.Seq] {
		return // retransmitted duplicate
	}
	x.seenSeg[k][t.Seq] = true
	flags, rev := p[mpaKeyLen], p[mpaKeyLen+1]
	n := int(binary.BigEndian.Uint16(p[mpaKeyLen+2:]))
	pd := p[mpaHeaderLen:]
	if n < len(pd) {
		pd = pd[:n]
	}
	if flags&mpaFlagEnh != 0 && rev == 2 && len(pd) >= mpaIRDORDLen {
		pd = pd[mpaIRDORDLen:]
	}
	if req {
		if _, dup := x.mpaReq[k]; dup {
			return
		}
		x.mpaReq[k] = len(x.conns)
		x.conns = append(x.conns, Conn{
			N: len(x.conns) + 1, Transport: "iwarp", Client: src, Server: dst, Port: int(t.DstPort),
			RequestFrame:      number,
			ClientPrivateData: append(HexBytes{}, pd...),
		})
		return
	}
	i, ok := x.mpaReq[tcpKey{dst, src, uint16(t.DstPort), uint16(t.SrcPort)}]
	if !ok || x.conns[i].ReplyFrame != 0 {
		return
	}
	c := &x.conns[i]
	c.ReplyFrame = number
	c.Rejected = flags&mpaFlagReject != 0
	c.ServerPrivateData = append(HexBytes{}, pd...)
}
