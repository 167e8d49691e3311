package export

import (
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/cmpd-dissect/cmpd-dissect/conn"
	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/layers/mpa"
	"github.com/cmpd-dissect/cmpd-dissect/layers/rpcrdma"
)

// endpoint is one end of a packet as the network shows it: an IP address
// or GID, an IB LID, a TCP port.
type endpoint struct {
	addr netip.Addr
	lid  uint16
	port uint16
}

func (e endpoint) valid() bool { return e.addr.IsValid() || e.lid != 0 }

// String renders the endpoint as conn.Peer does.
func (e endpoint) String() string {
	return conn.Peer{Addr: e.addr, LID: e.lid, Port: e.port}.String()
}

// rpcMsg is one RPC-over-RDMA message of a record: its transport header
// and the RPC message in it (nil for RDMA_NOMSG and RDMA_ERROR without
// one), with the packet's ends and QP at the time it was decoded.
type rpcMsg struct {
	hdr      *rpcrdma.Header
	rpc      *rpcrdma.RPC
	src, dst endpoint
	qp       uint32
}

// packetView is what the export reads from a record's layers.
type packetView struct {
	src, dst endpoint
	ip, tcp  bool
	lrh      *ibcm.LRH
	grh      *ibcm.GRH
	bth      *ibcm.BTH
	cm       *ibcm.CM
	mpa      bool
	rdmap    *mpa.RDMAP
	hdr      *rpcrdma.Header
	rpc      *rpcrdma.RPC
	msgs     []rpcMsg
}

func ipAddr(ip net.IP) netip.Addr {
	a, _ := netip.AddrFromSlice(ip)
	return a.Unmap()
}

func (p *packetView) read(rec *dissect.Record) {
	var qp uint32
	for _, l := range rec.Layers {
		switch x := l.(type) {
		case *dissect.IPv4:
			p.ip, p.src.addr, p.dst.addr = true, ipAddr(x.SrcIP), ipAddr(x.DstIP)
		case *dissect.IPv6:
			p.ip, p.src.addr, p.dst.addr = true, ipAddr(x.SrcIP), ipAddr(x.DstIP)
		case *dissect.TCP:
			p.tcp, p.src.port, p.dst.port = true, uint16(x.SrcPort), uint16(x.DstPort)
		case *ibcm.LRH:
			p.lrh = x
			p.src.lid, p.dst.lid = x.SLID, x.DLID
		case *ibcm.GRH:
			p.grh = x
			if !p.ip {
				p.src.addr, p.dst.addr = x.SrcGID(), x.DstGID()
			}
		case *ibcm.BTH:
			if p.bth == nil {
				p.bth = x
			}
			qp = x.DestQP
		case *ibcm.CM:
			p.cm = x
		case *mpa.Frame:
			p.mpa = true
		case *mpa.RDMAP:
			if p.rdmap == nil {
				p.rdmap = x
			}
		case *rpcrdma.Header:
			if p.hdr == nil {
				p.hdr = x
			}
			p.msgs = append(p.msgs, rpcMsg{hdr: x, src: p.src, dst: p.dst, qp: qp})
		case *rpcrdma.RPC:
			if p.rpc == nil {
				p.rpc = x
			}
			if n := len(p.msgs); n > 0 && p.msgs[n-1].rpc == nil {
				p.msgs[n-1].rpc = x
			} else {
				p.msgs = append(p.msgs, rpcMsg{rpc: x, src: p.src, dst: p.dst, qp: qp})
			}
		}
	}
}

func (p *packetView) row(capture string, rec *dissect.Record, connID int) Packet {
	r := Packet{SchemaVersion: SchemaVersion, Capture: capture, Frame: int64(rec.Frame), Time: rec.Time.UTC(),
		Len: int64(rec.Length), CapLen: int64(rec.CaptureLength), Findings: int64(len(rec.Findings)),
		Connection: frameRef(connID)}
	// As frame.protocols: the layers after the frame pseudo-layer.
	var b strings.Builder
	for _, l := range rec.Layers {
		name := l.Proto().Name
		if name == dissect.ProtoFrame.Name {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(':')
		}
		b.WriteString(name)
	}
	r.Protocols = b.String()
	if p.src.valid() {
		s, d := endText(p.src), endText(p.dst)
		r.Src, r.Dst = &s, &d
	}
	if p.tcp {
		r.SrcPort, r.DstPort = i64(int64(p.src.port)), i64(int64(p.dst.port))
	} else {
		for _, l := range rec.Layers {
			if u, ok := l.(*dissect.UDP); ok {
				r.SrcPort, r.DstPort = i64(int64(u.SrcPort)), i64(int64(u.DstPort))
				break
			}
		}
	}
	if x := p.bth; x != nil {
		r.BTHOpcode, r.BTHDestQP, r.BTHPSN = i64(int64(x.OpCode)), i64(int64(x.DestQP)), i64(int64(x.PSN))
	}
	if p.cm != nil {
		r.CMAttributeID = i64(int64(p.cm.AttributeID))
	}
	if p.rdmap != nil {
		r.RDMAPOpcode = i64(int64(p.rdmap.Opcode))
	}
	if p.hdr != nil {
		r.RPCRDMAXID, r.RPCRDMAMsgType = i64(int64(p.hdr.XID)), i64(int64(p.hdr.Proc))
	}
	if x := p.rpc; x != nil {
		r.RPCXID, r.RPCMsgType = i64(int64(x.XID)), i64(int64(x.MsgType))
		if x.MsgType == rpcrdma.MsgCall || x.CallKnown {
			r.RPCProgram, r.RPCProcedure = i64(int64(x.Program)), i64(int64(x.Procedure))
		}
	}
	return r
}

// endText is an address without the port (the ports have columns of
// their own).
func endText(e endpoint) string {
	e.port = 0
	if e.addr.IsValid() && e.lid == 0 {
		return e.addr.String()
	}
	if !e.addr.IsValid() {
		return "lid 0x" + strconv.FormatUint(uint64(e.lid)|0x10000, 16)[1:]
	}
	return e.String()
}
