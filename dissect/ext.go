package dissect

import (
	"strconv"

	"github.com/gopacket/gopacket"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// extensions holds the decoders of the RDMA families and the reassembly
// state; the Dissector calls them at the points where their traffic is
// found.
type extensions struct {
	d  *Dissector
	ib *ibcm.Stack

	iwarp *IWARP
	icrc  ibcm.ICRCChecker
	// aheadICRC is the frame's source.Ahead while Dissect runs (AheadICRC).
	aheadICRC source.Ahead
}

func (x *extensions) init(d *Dissector) {
	x.d = d
	x.ib = ibcm.NewStack()
	x.iwarp = NewIWARP(d.opts.IWARP)
}

// dissectLink decodes a frame of a non-Ethernet link type; false when the
// link type is not dissected.
func (x *extensions) dissectLink(linkType int, data []byte) bool {
	switch linkType {
	case source.LinkTypeInfiniBand:
		x.d.decodeChain(ibcm.LayerTypeLRH, data, 0)
	case source.LinkTypeERF:
		x.d.decodeChain(ibcm.LayerTypeERF, data, 0)
	default:
		return false
	}
	return true
}

// allLayers are the layers decodeChain decodes, whatever the link type
// (a RoCE UDP port and ethertype 0x8915 lead from the Ethernet layers into
// the IB ones; ERF leads to Ethernet or the LRH).
func (x *extensions) allLayers() []gopacket.DecodingLayer {
	d := x.d
	return append([]gopacket.DecodingLayer{&d.eth, &d.vlan, &d.ip4, &d.ip6, &d.udp, &d.tcp}, x.ib.DecodingLayers()...)
}

// dissectTCP hands a TCP segment to iWARP reassembly.
func (x *extensions) dissectTCP(t *TCP, net gopacket.Flow) {
	x.iwarp.Segment(&x.d.rec, net, &t.TCP)
}

// layerFor maps a layer type decoded by an extension parser to its layer.
func (x *extensions) layerFor(t gopacket.LayerType) field.Layer {
	s := x.ib
	switch t {
	case ibcm.LayerTypeERF:
		return &s.ERF
	case ibcm.LayerTypeLRH:
		return &s.LRH
	case ibcm.LayerTypeGRH:
		return &s.GRH
	case ibcm.LayerTypeBTH:
		return &s.BTH
	case ibcm.LayerTypeDETH:
		return &s.DETH
	case ibcm.LayerTypeRETH:
		return &s.RETH
	case ibcm.LayerTypeAETH:
		return &s.AETH
	case ibcm.LayerTypeIETH:
		return &s.IETH
	case ibcm.LayerTypeImmDt:
		return &s.ImmDt
	case ibcm.LayerTypeAtomicETH:
		return &s.AtomicETH
	case ibcm.LayerTypeAtomicAckETH:
		return &s.AtomicAckETH
	case ibcm.LayerTypeMAD:
		return &s.MAD
	case ibcm.LayerTypeCM:
		return &s.CM
	}
	return nil
}

// icrcAt is where decodeChain found the layers an ICRC covers: frame
// offsets of the IP header (RoCEv2), GRH (RoCEv1) and LRH (native IB), -1
// when absent, and the BTH.
type icrcAt struct {
	ip, grh, lrh int
	v6           bool
	bth          *ibcm.BTH
}

// checkICRC checks the ICRC of the IB transport packet decodeChain found
// (RoCEv2 from the IP header, RoCEv1 from the GRH, native IB from the
// LRH). It returns the BTH, nil when there is none.
func (x *extensions) checkICRC(at *icrcAt) *ibcm.BTH {
	r := &x.d.rec
	bth := at.bth
	ipOff, grhOff, lrhOff, v6 := at.ip, at.grh, at.lrh, at.v6
	if bth == nil {
		return nil
	}
	data := r.Data
	var computed uint32
	ok := false
	found := false
	switch {
	case lrhOff >= 0:
		if computed, ok, found = x.ahead(aheadIB, lrhOff); !found {
			_, computed, ok = ibcm.CheckIBICRC(data[lrhOff:])
		}
	case grhOff >= 0 && ipOff < 0:
		if computed, ok, found = x.ahead(aheadRoCEv1, grhOff); !found {
			_, computed, ok = ibcm.CheckRoCEv1ICRC(data[grhOff:])
		}
	case ipOff >= 0:
		kind := aheadRoCEv2IPv4
		if v6 {
			kind = aheadRoCEv2IPv6
		}
		if computed, ok, found = x.ahead(kind, ipOff); !found {
			_, computed, ok = x.icrc.CheckRoCEv2(data[ipOff:], v6)
		}
	}
	if ok {
		bth.SetICRCComputed(computed)
	}
	return bth
}

// finish flushes reassembly at end of input.
func (x *extensions) finish(fn func(*Record)) {
	r := &x.d.rec
	r.Reset()
	r.Frame = 0
	r.LinkType = -1
	x.iwarp.Flush(r)
	flushSends(r)
	if len(r.Layers) > 0 || len(r.Findings) > 0 {
		fn(r)
	}
}

// sendOn hands an RC Send packet's payload to the ULP decoder, with the
// Record r (whose Send state is used). Single-packet Sends (SEND_ONLY,
// with immediate data or invalidate; invRKey is the IETH's R_Key) go
// straight to decodeSend; the pieces of multi-packet Sends to the Send
// reassembly.
func sendOn(r *Record, bth *ibcm.BTH, invRKey uint32, payload []byte) {
	switch bth.OpCode {
	case ibcm.OpRCSendOnly, ibcm.OpRCSendOnlyImm, ibcm.OpRCSendOnlyInv:
		info := SendInfo{Transport: "ib", FirstFrame: r.Frame, LastFrame: r.Frame, Length: len(payload)}
		if bth.OpCode == ibcm.OpRCSendOnlyInv {
			info.Invalidate, info.InvalidateSTag = true, invRKey
		}
		decodeSend(r, payload, info)
	default:
		if ibSendPiece != nil {
			ibSendPiece(r, bth, payload)
		}
	}
}

// ibSendPiece is installed by the Send reassembly (sends.go): it takes the
// pieces of multi-packet RC Sends, and calls decodeSend when one is
// complete. Nil: only single-packet Sends are decoded.
var ibSendPiece func(rec *Record, bth *ibcm.BTH, payload []byte)

// AppendEndpoints appends the frame's source and destination as the
// summary view shows them, from the innermost layer that has addresses:
// IP addresses, GIDs (RoCEv1, native IB with GRH), LIDs ("LID 5", native
// IB), or MAC addresses.
func AppendEndpoints(r *Record, src, dst []byte) ([]byte, []byte) {
	return AppendEndpointsOf(EndpointsLayer(r), src, dst)
}

// EndpointsLayer returns the innermost layer of r that has addresses (the
// one AppendEndpoints uses), nil if none. Records whose layers are the
// same values (a Dissector reuses them) have the same one.
func EndpointsLayer(r *Record) field.Layer {
	for i := len(r.Layers) - 1; i >= 0; i-- {
		switch l := r.Layers[i]; l.(type) {
		case Addresser, *ibcm.GRH, *ibcm.LRH:
			return l
		}
	}
	return nil
}

// AppendEndpointsOf appends the source and destination of l, a layer
// EndpointsLayer returned (nothing for nil).
func AppendEndpointsOf(l field.Layer, src, dst []byte) ([]byte, []byte) {
	switch l := l.(type) {
	case Addresser:
		return l.AppendSrc(src), l.AppendDst(dst)
	case *ibcm.GRH:
		return l.SrcGID().AppendTo(src), l.DstGID().AppendTo(dst)
	case *ibcm.LRH:
		src = strconv.AppendUint(append(src, "LID "...), uint64(l.SLID), 10)
		dst = strconv.AppendUint(append(dst, "LID "...), uint64(l.DLID), 10)
	}
	return src, dst
}
