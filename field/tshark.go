package field

import "sync/atomic"

// tshark's field names for ours, where the meaning and the value are the
// same (checked against "tshark -G fields" of Wireshark 4.0 by
// TestTsharkAliasesExist in cmd/cmpd-dissect). -Y, -T fields -e and every
// other Lookup accept them; "cmpd-dissect fields" lists them beside the
// field. Left out on purpose: ip.frag_offset (tshark's is in bytes, ours
// in 8-octet units), infiniband.ieth, infiniband.immdt and
// iwarp_rdma.term_ddp_seg_len (tshark's are byte strings, ours integers),
// infiniband.cm.req.alt_localgid/alt_remotegid (tshark's are bytes, ours
// addresses: a filter value would be written differently),
// infiniband.cm.req.prim_flowlabel/prim_pktrate and the alt_ ones
// (tshark reads other bits), ip.version (tshark's is also IPv6's),
// infiniband.cm.req.private and .ip_cm (tshark's holds the rdma_cm
// header as bytes, or nothing when it decodes it), iwarp_mpa.res
// (tshark's holds the Enhanced bit too).
var tsharkAliases = [...]struct {
	alias, name string
	// format is how tshark prints the value where it differs from ours
	// (-T fields -e with tshark's name prints it so).
	format tsharkFormat
}{
	// either-side fields
	{"ip.addr", "ipv4.addr", ours},
	{"ip.src_host", "ipv4.src_host", ours},
	{"ip.dst_host", "ipv4.dst_host", ours},
	{"ip.host", "ipv4.host", ours},
	{"eth.addr", "ethernet.addr", ours},
	// ipv6.addr, tcp.port and udp.port are our own names too.
	// aeth
	{"infiniband.aeth.syndrome", "aeth.syndrome", dec},
	{"infiniband.aeth.syndrome.reserved", "aeth.syndrome.reserved", ours},
	{"infiniband.aeth.syndrome.opcode", "aeth.syndrome.opcode", ours},
	{"infiniband.aeth.syndrome.credit_count", "aeth.syndrome.credit_count", ours},
	{"infiniband.aeth.syndrome.timer", "aeth.syndrome.timer", ours},
	{"infiniband.aeth.syndrome.error_code", "aeth.syndrome.error_code", ours},
	{"infiniband.aeth.syndrome.reserved_value", "aeth.syndrome.reserved_value", ours},
	{"infiniband.aeth.msn", "aeth.msn", ours},
	// atomicacketh
	{"infiniband.atomicacketh.origremdt", "atomicacketh.origremdt", dec},
	// atomiceth
	{"infiniband.atomiceth.swapdt", "atomiceth.swapdt", dec},
	{"infiniband.atomiceth.cmpdt", "atomiceth.cmpdt", dec},
	// bth
	{"infiniband.invariant.crc", "bth.icrc", ours},
	{"infiniband.bth.opcode", "bth.opcode", dec},
	{"infiniband.bth.se", "bth.se", ours},
	{"infiniband.bth.m", "bth.m", ours},
	{"infiniband.bth.padcnt", "bth.padcnt", ours},
	{"infiniband.bth.tver", "bth.tver", ours},
	{"infiniband.bth.p_key", "bth.p_key", dec},
	{"infiniband.bth.destqp", "bth.destqp", ours},
	{"infiniband.bth.a", "bth.a", ours},
	{"infiniband.bth.reserved7", "bth.reserved7", dec},
	{"infiniband.bth.psn", "bth.psn", ours},
	// cm
	{"infiniband.cm.rej.private", "cm.rej.private", ours},
	{"infiniband.cm.rep.private", "cm.rep.private", ours},
	{"infiniband.cm.rtu.private", "cm.rtu.private", ours},
	{"infiniband.cm.dreq.private", "cm.dreq.private", ours},
	{"infiniband.cm.rej.localcommid", "cm.rej.localcommid", ours},
	{"infiniband.cm.rej.remotecommid", "cm.rej.remotecommid", ours},
	{"infiniband.cm.rej.msgrej", "cm.rej.msgrej", hex8},
	{"infiniband.cm.rej.rejinfolen", "cm.rej.rejinfolen", hex8},
	{"infiniband.cm.rej.reason", "cm.rej.reason", hex16},
	{"infiniband.cm.rej.ari", "cm.rej.ari", ours},
	{"infiniband.cm.rep.remotecommid", "cm.rep.remotecommid", ours},
	{"infiniband.cm.rep.localqkey", "cm.rep.localqkey", ours},
	{"infiniband.cm.rep.localqpn", "cm.rep.localqpn", ours},
	{"infiniband.cm.rep.localeecn", "cm.rep.localeecn", ours},
	{"infiniband.cm.rep.startpsn", "cm.rep.startpsn", hex24},
	{"infiniband.cm.rep.respres", "cm.rep.respres", hex8},
	{"infiniband.cm.rep.initdepth", "cm.rep.initdepth", hex8},
	{"infiniband.cm.rep.tgtackdelay", "cm.rep.tgtackdelay", hex8},
	{"infiniband.cm.rep.failoveracc", "cm.rep.failoveracc", hex8},
	{"infiniband.cm.rep.e2eflowctrl", "cm.rep.e2eflowctrl", hex8},
	{"infiniband.cm.rep.rnrretrcount", "cm.rep.rnrretrcount", hex8},
	{"infiniband.cm.rep.srq", "cm.rep.srq", hex8},
	{"infiniband.cm.rep.reserved", "cm.rep.reserved", hex8},
	{"infiniband.cm.rep.localcaguid", "cm.rep.localcaguid", hex64},
	{"infiniband.cm.rtu.localcommid", "cm.rtu.localcommid", ours},
	{"infiniband.cm.rtu.remotecommid", "cm.rtu.remotecommid", ours},
	{"infiniband.cm.dreq.localcommid", "cm.dreq.localcommid", ours},
	{"infiniband.cm.dreq.remotecommid", "cm.dreq.remotecommid", ours},
	{"infiniband.cm.req.localcaguid", "cm.req.localcaguid", hex64},
	{"infiniband.cm.req.localqkey", "cm.req.localqkey", ours},
	{"infiniband.cm.req.localqpn", "cm.req.localqpn", ours},
	{"infiniband.cm.req.responderres", "cm.req.responderres", hex8},
	{"infiniband.cm.req.localeecn", "cm.req.localeecn", ours},
	{"infiniband.cm.req.initdepth", "cm.req.initdepth", hex8},
	{"infiniband.cm.req.remoteeecn", "cm.req.remoteeecn", ours},
	{"infiniband.cm.req.remoteresptout", "cm.req.remoteresptout", hex8},
	{"infiniband.cm.req.transpsvctype", "cm.req.transpsvctype", hex8},
	{"infiniband.cm.req.e2eflowctrl", "cm.req.e2eflowctrl", hex8},
	{"infiniband.cm.req.startpsn", "cm.req.startpsn", hex24},
	{"infiniband.cm.req.localresptout", "cm.req.localresptout", hex8},
	{"infiniband.cm.req.retrcount", "cm.req.retrcount", hex8},
	{"infiniband.cm.req.pkey", "cm.req.pkey", ours},
	{"infiniband.cm.req.pppmtu", "cm.req.pppmtu", hex8},
	{"infiniband.cm.req.rdcexist", "cm.req.rdcexist", hex8},
	{"infiniband.cm.req.rnrretrcount", "cm.req.rnrretrcount", hex8},
	{"infiniband.cm.req.maxcmretr", "cm.req.maxcmretr", hex8},
	{"infiniband.cm.req.srq", "cm.req.srq", hex8},
	{"infiniband.cm.req.ext_transport", "cm.req.ext_transport", hex8},
	{"infiniband.cm.req.prim_locallid", "cm.req.prim_locallid", ours},
	{"infiniband.cm.req.prim_remotelid", "cm.req.prim_remotelid", ours},
	{"infiniband.cm.req.prim_localgid", "cm.req.prim_localgid", ours},
	{"infiniband.cm.req.prim_remotegid", "cm.req.prim_remotegid", ours},
	{"infiniband.cm.req.prim_tfcclass", "cm.req.prim_tfcclass", ours},
	{"infiniband.cm.req.prim_hoplim", "cm.req.prim_hoplim", hex8},
	{"infiniband.cm.req.prim_sl", "cm.req.prim_sl", hex8},
	{"infiniband.cm.req.prim_subnetlocal", "cm.req.prim_subnetlocal", hex8},
	{"infiniband.cm.req.prim_localacktout", "cm.req.prim_localacktout", hex8},
	{"infiniband.cm.req.alt_locallid", "cm.req.alt_locallid", ours},
	{"infiniband.cm.req.alt_remotelid", "cm.req.alt_remotelid", ours},
	{"infiniband.cm.req.alt_tfcclass", "cm.req.alt_tfcclass", ours},
	{"infiniband.cm.req.alt_hoplim", "cm.req.alt_hoplim", hex8},
	{"infiniband.cm.req.alt_sl", "cm.req.alt_sl", hex8},
	{"infiniband.cm.req.alt_subnetlocal", "cm.req.alt_subnetlocal", hex8},
	{"infiniband.cm.req.alt_localacktout", "cm.req.alt_localacktout", hex8},
	{"infiniband.cm.req.serviceid", "cm.req.serviceid", ours},
	{"infiniband.cm.req.serviceid.dport", "cm.req.serviceid.dport", hex16},
	{"infiniband.cm.req.ip_cm.majv", "cm.req.ip_cm.majv", hex8},
	{"infiniband.cm.req.ip_cm.minv", "cm.req.ip_cm.minv", hex8},
	{"infiniband.cm.req.ip_cm.ipv", "cm.req.ip_cm.ipv", hex8},
	{"infiniband.cm.req.ip_cm.reserved", "cm.req.ip_cm.reserved", hex8},
	{"infiniband.cm.req.ip_cm.sport", "cm.req.ip_cm.sport", hex16},
	{"infiniband.cm.req.ip_cm.sip4", "cm.req.ip_cm.sip4", ours},
	{"infiniband.cm.req.ip_cm.dip4", "cm.req.ip_cm.dip4", ours},
	{"infiniband.cm.req.ip_cm.sip6", "cm.req.ip_cm.sip6", ours},
	{"infiniband.cm.req.ip_cm.dip6", "cm.req.ip_cm.dip6", ours},
	{"infiniband.cm.req.ip_cm.private", "cm.req.ip_cm.private", ours},
	// ddp
	{"iwarp_ddp.tagged_flag", "ddp.tagged_flag", ours},
	{"iwarp_ddp.last_flag", "ddp.last_flag", ours},
	{"iwarp_ddp.rsvd", "ddp.rsvd", hex8},
	{"iwarp_ddp.dv", "ddp.dv", ours},
	{"iwarp_ddp.rsvdulp", "ddp.rsvdulp", ours},
	{"iwarp_ddp.stag", "ddp.stag", ours},
	{"iwarp_ddp.tagged_offset", "ddp.tagged_offset", ours},
	{"iwarp_ddp.qn", "ddp.qn", ours},
	{"iwarp_ddp.msn", "ddp.msn", ours},
	{"iwarp_ddp.mo", "ddp.mo", ours},
	// deth
	{"infiniband.deth.q_key", "deth.q_key", hex64},
	{"infiniband.deth.srcqp", "deth.srcqp", hex32},
	// ethernet
	{"eth.dst", "ethernet.dst", ours},
	{"eth.src", "ethernet.src", ours},
	{"eth.len", "ethernet.len", ours},
	{"eth.type", "ethernet.type", ours},
	// fpdu
	{"iwarp_mpa.ulpdulength", "fpdu.ulpdulength", ours},
	{"iwarp_mpa.pad", "fpdu.pad", ours},
	{"iwarp_mpa.crc", "fpdu.crc", ours},
	{"iwarp_mpa.crc_check", "fpdu.crc_check", ours},
	{"iwarp_mpa.markers", "fpdu.markers", ours},
	{"iwarp_mpa.marker_res", "fpdu.marker_res", ours},
	{"iwarp_mpa.marker_fpduptr", "fpdu.marker_fpduptr", ours},
	// grh
	{"infiniband.grh.ipver", "grh.ipver", ours},
	{"infiniband.grh.tclass", "grh.tclass", dec},
	{"infiniband.grh.flowlabel", "grh.flowlabel", dec},
	{"infiniband.grh.paylen", "grh.paylen", ours},
	{"infiniband.grh.nxthdr", "grh.nxthdr", dec},
	{"infiniband.grh.hoplmt", "grh.hoplmt", ours},
	{"infiniband.grh.sgid", "grh.sgid", ours},
	{"infiniband.grh.dgid", "grh.dgid", ours},
	// ipv4
	{"ip.hdr_len", "ipv4.hdr_len", ours},
	{"ip.dsfield.dscp", "ipv4.dsfield.dscp", ours},
	{"ip.dsfield.ecn", "ipv4.dsfield.ecn", ours},
	{"ip.len", "ipv4.len", ours},
	{"ip.id", "ipv4.id", ours},
	{"ip.flags.df", "ipv4.flags.df", ours},
	{"ip.flags.mf", "ipv4.flags.mf", ours},
	{"ip.ttl", "ipv4.ttl", ours},
	{"ip.checksum", "ipv4.checksum", ours},
	{"ip.src", "ipv4.src", ours},
	{"ip.dst", "ipv4.dst", ours},
	{"ip.proto", "ipv4.proto", ours},
	// lrh
	{"infiniband.variant.crc", "lrh.vcrc", ours},
	{"infiniband.lrh.vl", "lrh.vl", hex8},
	{"infiniband.lrh.lver", "lrh.lver", ours},
	{"infiniband.lrh.sl", "lrh.sl", ours},
	{"infiniband.lrh.reserved2", "lrh.reserved2", ours},
	{"infiniband.lrh.lnh", "lrh.lnh", hex8},
	{"infiniband.lrh.dlid", "lrh.dlid", ours},
	{"infiniband.lrh.reserved5", "lrh.reserved5", ours},
	{"infiniband.lrh.pktlen", "lrh.pktlen", ours},
	{"infiniband.lrh.slid", "lrh.slid", ours},
	// mad
	{"infiniband.mad.baseversion", "mad.baseversion", hex8},
	{"infiniband.mad.mgmtclass", "mad.mgmtclass", ours},
	{"infiniband.mad.classversion", "mad.classversion", hex8},
	{"infiniband.mad.method", "mad.method", ours},
	{"infiniband.mad.status", "mad.status", ours},
	{"infiniband.mad.classspecific", "mad.classspecific", ours},
	{"infiniband.mad.transactionid", "mad.transactionid", ours},
	{"infiniband.mad.attributeid", "mad.attributeid", ours},
	{"infiniband.mad.attributemodifier", "mad.attributemodifier", ours},
	// mpa
	{"iwarp_mpa.key.req", "mpa.key.req", ours},
	{"iwarp_mpa.key.rep", "mpa.key.rep", ours},
	{"iwarp_mpa.marker_flag", "mpa.marker_flag", ours},
	{"iwarp_mpa.crc_flag", "mpa.crc_flag", ours},
	{"iwarp_mpa.rej_flag", "mpa.rej_flag", ours},
	{"iwarp_mpa.rev", "mpa.rev", ours},
	{"iwarp_mpa.pdlength", "mpa.pdlength", ours},
	{"iwarp_mpa.privatedata", "mpa.privatedata", ours},
	// rdmap
	{"iwarp_rdma.version", "rdmap.version", ours},
	{"iwarp_rdma.rsv", "rdmap.rsv", hex8},
	{"iwarp_rdma.opcode", "rdmap.opcode", hex8},
	{"iwarp_rdma.reserved", "rdmap.reserved", ours},
	{"iwarp_rdma.inval_stag", "rdmap.inval_stag", dec},
	{"iwarp_rdma.rr", "rdmap.rr", ours},
	{"iwarp_rdma.sinkstag", "rdmap.sinkstag", ours},
	{"iwarp_rdma.sinkto", "rdmap.sinkto", ours},
	{"iwarp_rdma.rdmardsz", "rdmap.rdmardsz", ours},
	{"iwarp_rdma.srcstag", "rdmap.srcstag", ours},
	{"iwarp_rdma.srcto", "rdmap.srcto", ours},
	{"iwarp_rdma.terminate", "rdmap.terminate", ours},
	{"iwarp_rdma.term_layer", "rdmap.term_layer", hex8},
	{"iwarp_rdma.term_etype_rdma", "rdmap.term_etype_rdma", hex8},
	{"iwarp_rdma.term_etype_ddp", "rdmap.term_etype_ddp", hex8},
	{"iwarp_rdma.term_etype_llp", "rdmap.term_etype_llp", hex8},
	{"iwarp_rdma.term_etype", "rdmap.term_etype", hex8},
	{"iwarp_rdma.term_errcode_rdma", "rdmap.term_errcode_rdma", ours},
	{"iwarp_rdma.term_errcode_ddp_tagged", "rdmap.term_errcode_ddp_tagged", ours},
	{"iwarp_rdma.term_errcode_ddp_untagged", "rdmap.term_errcode_ddp_untagged", ours},
	{"iwarp_rdma.term_errcode_llp", "rdmap.term_errcode_llp", ours},
	{"iwarp_rdma.term_errcode", "rdmap.term_errcode", ours},
	{"iwarp_rdma.term_hdrct_m", "rdmap.term_hdrct_m", ours},
	{"iwarp_rdma.hdrct_d", "rdmap.hdrct_d", ours},
	{"iwarp_rdma.hdrct_r", "rdmap.hdrct_r", ours},
	{"iwarp_rdma.term_rsvd", "rdmap.term_rsvd", ours},
	{"iwarp_rdma.term_ddp_h", "rdmap.term_ddp_h", ours},
	{"iwarp_rdma.term_rdma_h", "rdmap.term_rdma_h", ours},
	// reth
	{"infiniband.reth.va", "reth.va", ours},
	{"infiniband.reth.r_key", "reth.r_key", ours},
	{"infiniband.reth.dmalen", "reth.dmalen", ours},
	// rpcrdma
	{"rpcordma.xid", "rpcrdma.xid", ours},
	{"rpcordma.version", "rpcrdma.version", ours},
	{"rpcordma.flow_control", "rpcrdma.flow_control", ours},
	{"rpcordma.msg_type", "rpcrdma.msg_type", ours},
	{"rpcordma.rdma_align", "rpcrdma.rdma_align", ours},
	{"rpcordma.rdma_thresh", "rpcrdma.rdma_thresh", ours},
	{"rpcordma.reads_count", "rpcrdma.reads_count", ours},
	{"rpcordma.position", "rpcrdma.position", ours},
	{"rpcordma.rdma_handle", "rpcrdma.rdma_handle", ours},
	{"rpcordma.rdma_length", "rpcrdma.rdma_length", ours},
	{"rpcordma.rdma_offset", "rpcrdma.rdma_offset", ours},
	{"rpcordma.writes_count", "rpcrdma.writes_count", ours},
	{"rpcordma.segment_count", "rpcrdma.segment_count", ours},
	{"rpcordma.reply_count", "rpcrdma.reply_count", ours},
	{"rpcordma.errcode", "rpcrdma.errcode", ours},
	{"rpcordma.vers_low", "rpcrdma.vers_low", ours},
	{"rpcordma.vers_high", "rpcrdma.vers_high", ours},
}

// tsharkFormat is how tshark prints a value in -T fields: as we do
// (ours), in decimal (dec), or in hex padded to its type's width (hexN,
// whose value is N).
type tsharkFormat uint8

const (
	ours  tsharkFormat = 0
	dec   tsharkFormat = 1
	hex8  tsharkFormat = 8
	hex16 tsharkFormat = 16
	hex24 tsharkFormat = 24
	hex32 tsharkFormat = 32
	hex64 tsharkFormat = 64
)

// TsharkFormat returns how -T fields prints the value of name when name is
// a tshark alias whose value tshark prints otherwise than ours
// (infiniband.bth.opcode: 100 where bth.opcode is 0x64): the kind
// (KindUint or KindHex) and, for hex, the width in bits.
func TsharkFormat(name string) (kind Kind, bits int, ok bool) {
	for _, al := range tsharkAliases {
		if al.alias != name {
			continue
		}
		switch al.format {
		case ours:
			return 0, 0, false
		case dec:
			return KindUint, 0, true
		}
		return KindHex, int(al.format), true
	}
	return 0, 0, false
}

// eitherFields are the "either side" fields, tshark's ip.addr: a value of
// either member is a value of the field, so ip.addr == A holds when the
// source or the destination is A, and -T fields -e ip.addr prints both
// (source, destination) as tshark does.
var eitherFields = [...]struct {
	name, desc string
	members    [2]string
}{
	{"ethernet.addr", "Source or Destination Address", [2]string{"ethernet.src", "ethernet.dst"}},
	{"ipv4.addr", "Source or Destination Address", [2]string{"ipv4.src", "ipv4.dst"}},
	{"ipv6.addr", "Source or Destination Address", [2]string{"ipv6.src", "ipv6.dst"}},
	{"ipv4.host", "Source or Destination Host", [2]string{"ipv4.src_host", "ipv4.dst_host"}},
	{"ipv6.host", "Source or Destination Host", [2]string{"ipv6.src_host", "ipv6.dst_host"}},
	{"tcp.port", "Source or Destination Port", [2]string{"tcp.srcport", "tcp.dstport"}},
	{"udp.port", "Source or Destination Port", [2]string{"udp.srcport", "udp.dstport"}},
	{"grh.gid", "Source or Destination GID", [2]string{"grh.sgid", "grh.dgid"}},
	{"lrh.lid", "Source or Destination Local ID", [2]string{"lrh.slid", "lrh.dlid"}},
}

// tsharkProtos are tshark's protocol names for ours, where a frame has
// the one exactly when it has the other.
var tsharkProtos = map[string]string{
	"ip": "ipv4", "eth": "ethernet", "iwarp_ddp": "ddp", "iwarp_rdma": "rdmap", "rpcordma": "rpcrdma",
}

var (
	aliases = map[string]*Field{}
	// derivedDone is set once every alias and either field is resolved;
	// until then (the protocols they name not all declared yet) each
	// lookup tries again.
	derivedDone atomic.Bool
)

// resolveDerived declares the either fields whose members exist and
// registers the aliases whose fields exist. The layer packages declare
// their fields in package initialisation, before any lookup.
func resolveDerived() {
	if derivedDone.Load() {
		return
	}
	regMu.Lock()
	defer regMu.Unlock()
	pending := false
	for _, e := range eitherFields {
		if _, ok := fields[e.name]; ok {
			continue
		}
		a, okA := fields[e.members[0]]
		b, okB := fields[e.members[1]]
		if !okA || !okB || a.Proto != b.Proto || a.Kind != b.Kind {
			pending = true
			continue
		}
		declareEither(e.name, e.desc, a, b)
	}
	for _, al := range tsharkAliases {
		if _, ok := aliases[al.alias]; ok {
			continue
		}
		f, ok := fields[al.name]
		if !ok {
			pending = true
			continue
		}
		if _, clash := fields[al.alias]; clash {
			panic("field: alias is a field name: " + al.alias)
		}
		aliases[al.alias] = f
		f.Aliases = append(f.Aliases, al.alias)
	}
	derivedDone.Store(!pending)
}

// declareEither registers an either field of a and b, listed after the
// later of them. regMu is held.
func declareEither(name, desc string, a, b *Field) {
	p := a.Proto
	f := &Field{Name: name, Kind: a.Kind, Bits: a.Bits, Desc: desc, Unit: a.Unit, Ref: a.Ref, Names: a.Names,
		Proto: p, ID: len(fields) + 1, Members: []*Field{a, b}}
	a.Either, b.Either = f, f
	at := len(p.Fields)
	for i, pf := range p.Fields {
		if pf == a || pf == b {
			at = i + 1
		}
	}
	p.Fields = append(p.Fields[:at], append([]*Field{f}, p.Fields[at:]...)...)
	fields[name] = f
}

// IsAlias reports whether name is a tshark name for another field.
func IsAlias(name string) bool {
	resolveDerived()
	regMu.RLock()
	defer regMu.RUnlock()
	_, ok := aliases[name]
	return ok
}
