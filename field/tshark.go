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
// addresses: a filter value would be written differently).
var tsharkAliases = [...]struct{ alias, name string }{
	// either-side fields
	{"ip.addr", "ipv4.addr"},
	{"eth.addr", "ethernet.addr"},
	// ipv6.addr, tcp.port and udp.port are our own names too.
	// aeth
	{"infiniband.aeth.syndrome", "aeth.syndrome"},
	{"infiniband.aeth.syndrome.reserved", "aeth.syndrome.reserved"},
	{"infiniband.aeth.syndrome.opcode", "aeth.syndrome.opcode"},
	{"infiniband.aeth.syndrome.credit_count", "aeth.syndrome.credit_count"},
	{"infiniband.aeth.syndrome.timer", "aeth.syndrome.timer"},
	{"infiniband.aeth.syndrome.error_code", "aeth.syndrome.error_code"},
	{"infiniband.aeth.syndrome.reserved_value", "aeth.syndrome.reserved_value"},
	{"infiniband.aeth.msn", "aeth.msn"},
	// atomicacketh
	{"infiniband.atomicacketh.origremdt", "atomicacketh.origremdt"},
	// atomiceth
	{"infiniband.atomiceth.swapdt", "atomiceth.swapdt"},
	{"infiniband.atomiceth.cmpdt", "atomiceth.cmpdt"},
	// bth
	{"infiniband.invariant.crc", "bth.icrc"},
	{"infiniband.bth.opcode", "bth.opcode"},
	{"infiniband.bth.se", "bth.se"},
	{"infiniband.bth.m", "bth.m"},
	{"infiniband.bth.padcnt", "bth.padcnt"},
	{"infiniband.bth.tver", "bth.tver"},
	{"infiniband.bth.p_key", "bth.p_key"},
	{"infiniband.bth.destqp", "bth.destqp"},
	{"infiniband.bth.a", "bth.a"},
	{"infiniband.bth.reserved7", "bth.reserved7"},
	{"infiniband.bth.psn", "bth.psn"},
	// cm
	{"infiniband.cm.req.private", "cm.req.private"},
	{"infiniband.cm.rej.private", "cm.rej.private"},
	{"infiniband.cm.rep.private", "cm.rep.private"},
	{"infiniband.cm.rtu.private", "cm.rtu.private"},
	{"infiniband.cm.dreq.private", "cm.dreq.private"},
	{"infiniband.cm.rej.localcommid", "cm.rej.localcommid"},
	{"infiniband.cm.rej.remotecommid", "cm.rej.remotecommid"},
	{"infiniband.cm.rej.msgrej", "cm.rej.msgrej"},
	{"infiniband.cm.rej.rejinfolen", "cm.rej.rejinfolen"},
	{"infiniband.cm.rej.reason", "cm.rej.reason"},
	{"infiniband.cm.rej.ari", "cm.rej.ari"},
	{"infiniband.cm.rep.remotecommid", "cm.rep.remotecommid"},
	{"infiniband.cm.rep.localqkey", "cm.rep.localqkey"},
	{"infiniband.cm.rep.localqpn", "cm.rep.localqpn"},
	{"infiniband.cm.rep.localeecn", "cm.rep.localeecn"},
	{"infiniband.cm.rep.startpsn", "cm.rep.startpsn"},
	{"infiniband.cm.rep.respres", "cm.rep.respres"},
	{"infiniband.cm.rep.initdepth", "cm.rep.initdepth"},
	{"infiniband.cm.rep.tgtackdelay", "cm.rep.tgtackdelay"},
	{"infiniband.cm.rep.failoveracc", "cm.rep.failoveracc"},
	{"infiniband.cm.rep.e2eflowctrl", "cm.rep.e2eflowctrl"},
	{"infiniband.cm.rep.rnrretrcount", "cm.rep.rnrretrcount"},
	{"infiniband.cm.rep.srq", "cm.rep.srq"},
	{"infiniband.cm.rep.reserved", "cm.rep.reserved"},
	{"infiniband.cm.rep.localcaguid", "cm.rep.localcaguid"},
	{"infiniband.cm.rtu.localcommid", "cm.rtu.localcommid"},
	{"infiniband.cm.rtu.remotecommid", "cm.rtu.remotecommid"},
	{"infiniband.cm.dreq.localcommid", "cm.dreq.localcommid"},
	{"infiniband.cm.dreq.remotecommid", "cm.dreq.remotecommid"},
	{"infiniband.cm.req.localcaguid", "cm.req.localcaguid"},
	{"infiniband.cm.req.localqkey", "cm.req.localqkey"},
	{"infiniband.cm.req.localqpn", "cm.req.localqpn"},
	{"infiniband.cm.req.responderres", "cm.req.responderres"},
	{"infiniband.cm.req.localeecn", "cm.req.localeecn"},
	{"infiniband.cm.req.initdepth", "cm.req.initdepth"},
	{"infiniband.cm.req.remoteeecn", "cm.req.remoteeecn"},
	{"infiniband.cm.req.remoteresptout", "cm.req.remoteresptout"},
	{"infiniband.cm.req.transpsvctype", "cm.req.transpsvctype"},
	{"infiniband.cm.req.e2eflowctrl", "cm.req.e2eflowctrl"},
	{"infiniband.cm.req.startpsn", "cm.req.startpsn"},
	{"infiniband.cm.req.localresptout", "cm.req.localresptout"},
	{"infiniband.cm.req.retrcount", "cm.req.retrcount"},
	{"infiniband.cm.req.pkey", "cm.req.pkey"},
	{"infiniband.cm.req.pppmtu", "cm.req.pppmtu"},
	{"infiniband.cm.req.rdcexist", "cm.req.rdcexist"},
	{"infiniband.cm.req.rnrretrcount", "cm.req.rnrretrcount"},
	{"infiniband.cm.req.maxcmretr", "cm.req.maxcmretr"},
	{"infiniband.cm.req.srq", "cm.req.srq"},
	{"infiniband.cm.req.ext_transport", "cm.req.ext_transport"},
	{"infiniband.cm.req.prim_locallid", "cm.req.prim_locallid"},
	{"infiniband.cm.req.prim_remotelid", "cm.req.prim_remotelid"},
	{"infiniband.cm.req.prim_localgid", "cm.req.prim_localgid"},
	{"infiniband.cm.req.prim_remotegid", "cm.req.prim_remotegid"},
	{"infiniband.cm.req.prim_flowlabel", "cm.req.prim_flowlabel"},
	{"infiniband.cm.req.prim_pktrate", "cm.req.prim_pktrate"},
	{"infiniband.cm.req.prim_tfcclass", "cm.req.prim_tfcclass"},
	{"infiniband.cm.req.prim_hoplim", "cm.req.prim_hoplim"},
	{"infiniband.cm.req.prim_sl", "cm.req.prim_sl"},
	{"infiniband.cm.req.prim_subnetlocal", "cm.req.prim_subnetlocal"},
	{"infiniband.cm.req.prim_localacktout", "cm.req.prim_localacktout"},
	{"infiniband.cm.req.alt_locallid", "cm.req.alt_locallid"},
	{"infiniband.cm.req.alt_remotelid", "cm.req.alt_remotelid"},
	{"infiniband.cm.req.alt_flowlabel", "cm.req.alt_flowlabel"},
	{"infiniband.cm.req.alt_pktrate", "cm.req.alt_pktrate"},
	{"infiniband.cm.req.alt_tfcclass", "cm.req.alt_tfcclass"},
	{"infiniband.cm.req.alt_hoplim", "cm.req.alt_hoplim"},
	{"infiniband.cm.req.alt_sl", "cm.req.alt_sl"},
	{"infiniband.cm.req.alt_subnetlocal", "cm.req.alt_subnetlocal"},
	{"infiniband.cm.req.alt_localacktout", "cm.req.alt_localacktout"},
	{"infiniband.cm.req.serviceid", "cm.req.serviceid"},
	{"infiniband.cm.req.serviceid.dport", "cm.req.serviceid.dport"},
	{"infiniband.cm.req.ip_cm", "cm.req.ip_cm"},
	{"infiniband.cm.req.ip_cm.majv", "cm.req.ip_cm.majv"},
	{"infiniband.cm.req.ip_cm.minv", "cm.req.ip_cm.minv"},
	{"infiniband.cm.req.ip_cm.ipv", "cm.req.ip_cm.ipv"},
	{"infiniband.cm.req.ip_cm.reserved", "cm.req.ip_cm.reserved"},
	{"infiniband.cm.req.ip_cm.sport", "cm.req.ip_cm.sport"},
	{"infiniband.cm.req.ip_cm.sip4", "cm.req.ip_cm.sip4"},
	{"infiniband.cm.req.ip_cm.dip4", "cm.req.ip_cm.dip4"},
	{"infiniband.cm.req.ip_cm.sip6", "cm.req.ip_cm.sip6"},
	{"infiniband.cm.req.ip_cm.dip6", "cm.req.ip_cm.dip6"},
	{"infiniband.cm.req.ip_cm.private", "cm.req.ip_cm.private"},
	// ddp
	{"iwarp_ddp.tagged_flag", "ddp.tagged_flag"},
	{"iwarp_ddp.last_flag", "ddp.last_flag"},
	{"iwarp_ddp.rsvd", "ddp.rsvd"},
	{"iwarp_ddp.dv", "ddp.dv"},
	{"iwarp_ddp.rsvdulp", "ddp.rsvdulp"},
	{"iwarp_ddp.stag", "ddp.stag"},
	{"iwarp_ddp.tagged_offset", "ddp.tagged_offset"},
	{"iwarp_ddp.qn", "ddp.qn"},
	{"iwarp_ddp.msn", "ddp.msn"},
	{"iwarp_ddp.mo", "ddp.mo"},
	// deth
	{"infiniband.deth.q_key", "deth.q_key"},
	{"infiniband.deth.srcqp", "deth.srcqp"},
	// ethernet
	{"eth.dst", "ethernet.dst"},
	{"eth.src", "ethernet.src"},
	{"eth.len", "ethernet.len"},
	{"eth.type", "ethernet.type"},
	// fpdu
	{"iwarp_mpa.ulpdulength", "fpdu.ulpdulength"},
	{"iwarp_mpa.pad", "fpdu.pad"},
	{"iwarp_mpa.crc", "fpdu.crc"},
	{"iwarp_mpa.crc_check", "fpdu.crc_check"},
	{"iwarp_mpa.markers", "fpdu.markers"},
	{"iwarp_mpa.marker_res", "fpdu.marker_res"},
	{"iwarp_mpa.marker_fpduptr", "fpdu.marker_fpduptr"},
	// grh
	{"infiniband.grh.ipver", "grh.ipver"},
	{"infiniband.grh.tclass", "grh.tclass"},
	{"infiniband.grh.flowlabel", "grh.flowlabel"},
	{"infiniband.grh.paylen", "grh.paylen"},
	{"infiniband.grh.nxthdr", "grh.nxthdr"},
	{"infiniband.grh.hoplmt", "grh.hoplmt"},
	{"infiniband.grh.sgid", "grh.sgid"},
	{"infiniband.grh.dgid", "grh.dgid"},
	// ipv4
	{"ip.version", "ipv4.version"},
	{"ip.hdr_len", "ipv4.hdr_len"},
	{"ip.dsfield.dscp", "ipv4.dsfield.dscp"},
	{"ip.dsfield.ecn", "ipv4.dsfield.ecn"},
	{"ip.len", "ipv4.len"},
	{"ip.id", "ipv4.id"},
	{"ip.flags.df", "ipv4.flags.df"},
	{"ip.flags.mf", "ipv4.flags.mf"},
	{"ip.ttl", "ipv4.ttl"},
	{"ip.checksum", "ipv4.checksum"},
	{"ip.src", "ipv4.src"},
	{"ip.dst", "ipv4.dst"},
	{"ip.proto", "ipv4.proto"},
	// lrh
	{"infiniband.variant.crc", "lrh.vcrc"},
	{"infiniband.lrh.vl", "lrh.vl"},
	{"infiniband.lrh.lver", "lrh.lver"},
	{"infiniband.lrh.sl", "lrh.sl"},
	{"infiniband.lrh.reserved2", "lrh.reserved2"},
	{"infiniband.lrh.lnh", "lrh.lnh"},
	{"infiniband.lrh.dlid", "lrh.dlid"},
	{"infiniband.lrh.reserved5", "lrh.reserved5"},
	{"infiniband.lrh.pktlen", "lrh.pktlen"},
	{"infiniband.lrh.slid", "lrh.slid"},
	// mad
	{"infiniband.mad.baseversion", "mad.baseversion"},
	{"infiniband.mad.mgmtclass", "mad.mgmtclass"},
	{"infiniband.mad.classversion", "mad.classversion"},
	{"infiniband.mad.method", "mad.method"},
	{"infiniband.mad.status", "mad.status"},
	{"infiniband.mad.classspecific", "mad.classspecific"},
	{"infiniband.mad.transactionid", "mad.transactionid"},
	{"infiniband.mad.attributeid", "mad.attributeid"},
	{"infiniband.mad.attributemodifier", "mad.attributemodifier"},
	// mpa
	{"iwarp_mpa.key.req", "mpa.key.req"},
	{"iwarp_mpa.key.rep", "mpa.key.rep"},
	{"iwarp_mpa.marker_flag", "mpa.marker_flag"},
	{"iwarp_mpa.crc_flag", "mpa.crc_flag"},
	{"iwarp_mpa.rej_flag", "mpa.rej_flag"},
	{"iwarp_mpa.res", "mpa.res"},
	{"iwarp_mpa.rev", "mpa.rev"},
	{"iwarp_mpa.pdlength", "mpa.pdlength"},
	{"iwarp_mpa.privatedata", "mpa.privatedata"},
	// rdmap
	{"iwarp_rdma.version", "rdmap.version"},
	{"iwarp_rdma.rsv", "rdmap.rsv"},
	{"iwarp_rdma.opcode", "rdmap.opcode"},
	{"iwarp_rdma.reserved", "rdmap.reserved"},
	{"iwarp_rdma.inval_stag", "rdmap.inval_stag"},
	{"iwarp_rdma.rr", "rdmap.rr"},
	{"iwarp_rdma.sinkstag", "rdmap.sinkstag"},
	{"iwarp_rdma.sinkto", "rdmap.sinkto"},
	{"iwarp_rdma.rdmardsz", "rdmap.rdmardsz"},
	{"iwarp_rdma.srcstag", "rdmap.srcstag"},
	{"iwarp_rdma.srcto", "rdmap.srcto"},
	{"iwarp_rdma.terminate", "rdmap.terminate"},
	{"iwarp_rdma.term_layer", "rdmap.term_layer"},
	{"iwarp_rdma.term_etype_rdma", "rdmap.term_etype_rdma"},
	{"iwarp_rdma.term_etype_ddp", "rdmap.term_etype_ddp"},
	{"iwarp_rdma.term_etype_llp", "rdmap.term_etype_llp"},
	{"iwarp_rdma.term_etype", "rdmap.term_etype"},
	{"iwarp_rdma.term_errcode_rdma", "rdmap.term_errcode_rdma"},
	{"iwarp_rdma.term_errcode_ddp_tagged", "rdmap.term_errcode_ddp_tagged"},
	{"iwarp_rdma.term_errcode_ddp_untagged", "rdmap.term_errcode_ddp_untagged"},
	{"iwarp_rdma.term_errcode_llp", "rdmap.term_errcode_llp"},
	{"iwarp_rdma.term_errcode", "rdmap.term_errcode"},
	{"iwarp_rdma.term_hdrct_m", "rdmap.term_hdrct_m"},
	{"iwarp_rdma.hdrct_d", "rdmap.hdrct_d"},
	{"iwarp_rdma.hdrct_r", "rdmap.hdrct_r"},
	{"iwarp_rdma.term_rsvd", "rdmap.term_rsvd"},
	{"iwarp_rdma.term_ddp_h", "rdmap.term_ddp_h"},
	{"iwarp_rdma.term_rdma_h", "rdmap.term_rdma_h"},
	// reth
	{"infiniband.reth.va", "reth.va"},
	{"infiniband.reth.r_key", "reth.r_key"},
	{"infiniband.reth.dmalen", "reth.dmalen"},
	// rpcrdma
	{"rpcordma.xid", "rpcrdma.xid"},
	{"rpcordma.version", "rpcrdma.version"},
	{"rpcordma.flow_control", "rpcrdma.flow_control"},
	{"rpcordma.msg_type", "rpcrdma.msg_type"},
	{"rpcordma.rdma_align", "rpcrdma.rdma_align"},
	{"rpcordma.rdma_thresh", "rpcrdma.rdma_thresh"},
	{"rpcordma.reads_count", "rpcrdma.reads_count"},
	{"rpcordma.position", "rpcrdma.position"},
	{"rpcordma.rdma_handle", "rpcrdma.rdma_handle"},
	{"rpcordma.rdma_length", "rpcrdma.rdma_length"},
	{"rpcordma.rdma_offset", "rpcrdma.rdma_offset"},
	{"rpcordma.writes_count", "rpcrdma.writes_count"},
	{"rpcordma.segment_count", "rpcrdma.segment_count"},
	{"rpcordma.reply_count", "rpcrdma.reply_count"},
	{"rpcordma.errcode", "rpcrdma.errcode"},
	{"rpcordma.vers_low", "rpcrdma.vers_low"},
	{"rpcordma.vers_high", "rpcrdma.vers_high"},
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
