package capfilter

import (
	"fmt"
	"net/netip"
	"strings"

	"golang.org/x/net/bpf"
)

// The grammar is libpcap's (grammar.y), by recursive descent:
//
//	expr  = term { ("and" | "&&" | "or" | "||") (term | id) }   (and, or: equal precedence, from the left)
//	term  = ("not" | "!") term | "(" expr ")" | head id | pname | arith relop arith | other
//	head  = [pname] (dir [type] | type | "proto" | "gateway")
//	id    = ("not" | "!") id | "(" id { (and | or) id } ")" | value
//	value = NUM | IPv4 [("/" NUM) | ("mask" IPv4)] | IPv6 ["/" NUM] | MAC | name
//	dir   = src | dst | src or dst | src and dst | dst or src | dst and src
//	type  = host | net | port | portrange
//	other = vlan [NUM] | less NUM | greater NUM | inbound | outbound | [pname] (broadcast | multicast)
//
// A lone id repeats the qualifiers of the term before it ("port 4791 or
// 4792"). The parser generates each primitive's tests as it reads it,
// with the offsets of that moment: a "vlan" moves the offsets of
// everything read after it, as in libpcap.

// Protocol qualifiers.
type proto int

const (
	pDefault proto = iota
	pLink
	pIP
	pIP6
	pARP
	pRARP
	pTCP
	pUDP
	pSCTP
	pICMP
	pICMP6
	pIGMP
)

var protoNames = map[string]proto{
	"ether": pLink, "link": pLink, "ip": pIP, "ip6": pIP6, "arp": pARP, "rarp": pRARP,
	"tcp": pTCP, "udp": pUDP, "sctp": pSCTP, "icmp": pICMP, "icmp6": pICMP6, "igmp": pIGMP,
}

func (p proto) String() string {
	for n, q := range protoNames {
		if q == p && n != "link" {
			return n
		}
	}
	return "default"
}

// Direction qualifiers.
type dir int

const (
	dDefault dir = iota
	dSrc
	dDst
	dOr
	dAnd
)

// Address type qualifiers.
type addrType int

const (
	aDefault addrType = iota
	aHost
	aNet
	aPort
	aPortrange
	aProto
	aGateway
)

var addrNames = map[string]addrType{"host": aHost, "net": aNet, "port": aPort, "portrange": aPortrange, "gateway": aGateway}

// qual is the qualifiers of a primitive; a lone value after "and"/"or"
// takes the previous term's. ok is false where there are none to take
// (the start, or after a term that has none, such as "tcp" or a
// comparison).
type qual struct {
	ok    bool
	proto proto
	dir   dir
	addr  addrType
}

// Words of pcap-filter(7) this compiler does not have: named so that the
// message says so rather than "not a keyword".
var unsupportedWords = map[string]bool{
	"mpls": true, "pppoed": true, "pppoes": true, "geneve": true, "atalk": true, "aarp": true, "decnet": true,
	"lat": true, "sca": true, "moprc": true, "mopdl": true, "iso": true, "esis": true, "es-is": true, "isis": true,
	"is-is": true, "clnp": true, "stp": true, "ipx": true, "netbeui": true, "igrp": true, "pim": true, "vrrp": true,
	"carp": true, "ah": true, "esp": true, "protochain": true, "ifname": true, "on": true, "rnr": true,
	"rulenum": true, "reason": true, "rset": true, "ruleset": true, "srnr": true, "subrulenum": true, "action": true,
	"llc": true, "type": true, "subtype": true, "addr1": true, "addr2": true, "addr3": true, "addr4": true,
	"address1": true, "address2": true, "address3": true, "address4": true, "ra": true, "ta": true, "fddi": true,
	"tr": true, "wlan": true, "ppp": true, "slip": true, "radio": true, "lane": true, "oam": true, "oamf4": true,
	"byte": true, "ifindex": true, "l1": true, "l2": true, "iih": true, "lsp": true, "snp": true, "csnp": true,
	"psnp": true, "vpi": true, "vci": true, "hdpc": true, "hopc": true, "hsio": true, "hsls": true, "dpc": true,
	"opc": true, "sio": true, "sls": true, "fisu": true, "lssu": true, "msu": true, "hfisu": true, "hlssu": true,
	"hmsu": true, "metac": true, "bcc": true, "sc": true, "ilmic": true, "oamf4ec": true, "oamf4sc": true,
	"connectmsg": true, "metaconnect": true, "dir": true,
}

// keywords that are neither qualifiers nor values.
var otherKeywords = map[string]bool{
	"and": true, "or": true, "not": true, "vlan": true, "less": true, "greater": true, "len": true, "mask": true,
	"inbound": true, "outbound": true, "broadcast": true, "multicast": true, "proto": true, "src": true, "dst": true,
}

type parser struct {
	expr string
	toks []token
	i    int
	link link
	// offsets of the moment: vlan moves them.
	offLinkType, offLinkPL int
	vlanDepth              int
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) peekAt(k int) token {
	if p.i+k < len(p.toks) {
		return p.toks[p.i+k]
	}
	return p.toks[len(p.toks)-1]
}
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tkEOF {
		p.i++
	}
	return t
}

func (p *parser) errAt(pos int, format string, args ...any) error {
	return &Error{Lang: lang, Expr: p.expr, Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// kw is t's keyword, "" for a value, a name or punctuation.
func kw(t token) string {
	if t.kind != tkWord || t.escaped {
		return ""
	}
	w := strings.ToLower(t.text)
	if _, ok := protoNames[w]; ok {
		return w
	}
	if _, ok := addrNames[w]; ok {
		return w
	}
	if otherKeywords[w] || unsupportedWords[w] {
		return w
	}
	return ""
}

func isOp(t token, ops ...string) bool {
	if t.kind != tkOp {
		return false
	}
	for _, o := range ops {
		if t.text == o {
			return true
		}
	}
	return false
}

func isAnd(t token) bool { return kw(t) == "and" || isOp(t, "&&") }
func isOr(t token) bool  { return kw(t) == "or" || isOp(t, "||") }
func isNot(t token) bool { return kw(t) == "not" || isOp(t, "!") }

// relops: the comparisons, and whether the jump is negated.
var relops = map[string]struct {
	cond bpf.JumpTest
	neg  bool
}{
	">": {bpf.JumpGreaterThan, false}, ">=": {bpf.JumpGreaterOrEqual, false}, "=": {bpf.JumpEqual, false},
	"==": {bpf.JumpEqual, false}, "<=": {bpf.JumpGreaterThan, true}, "<": {bpf.JumpGreaterOrEqual, true},
	"!=": {bpf.JumpEqual, true},
}

// arithOps are the binary operators of arithmetic, by precedence (^ and
// %, which libpcap's grammar gives none, are handled apart).
var arithPrec = map[string]int{"|": 1, "&": 2, "<<": 3, ">>": 3, "+": 4, "-": 4, "*": 5, "/": 5}

func isArithOrRel(t token) bool {
	if t.kind != tkOp {
		return false
	}
	_, a := arithPrec[t.text]
	_, r := relops[t.text]
	return a || r || t.text == "^" || t.text == "%"
}

func (p *parser) parse() (node, error) {
	n, _, err := p.parseExpr(qual{})
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tkEOF {
		if isOp(t, ")") {
			return nil, p.errAt(t.pos, "%q without its \"(\"", t.text)
		}
		return nil, p.errAt(t.pos, "unexpected %q (join primitives with and, or)", t.text)
	}
	return n, nil
}

func (p *parser) parseExpr(inh qual) (node, qual, error) {
	n, q, err := p.parseTerm(inh)
	if err != nil {
		return nil, q, err
	}
	for {
		t := p.peek()
		and, or := isAnd(t), isOr(t)
		if !and && !or {
			return n, q, nil
		}
		p.next()
		var m node
		if p.startsID() {
			m, q, err = p.parseID(q)
		} else {
			m, q, err = p.parseTerm(q)
		}
		if err != nil {
			return nil, q, err
		}
		n = join(and, n, m)
	}
}

// startsID reports whether a lone value (with nots and parentheses
// before it) comes next: it then takes the previous qualifiers.
func (p *parser) startsID() bool {
	k := 0
	for isNot(p.peekAt(k)) || isOp(p.peekAt(k), "(") {
		k++
	}
	t := p.peekAt(k)
	if t.kind != tkWord || kw(t) != "" {
		return false
	}
	after := p.peekAt(k + 1)
	if _, named := namedNumbers[strings.ToLower(t.text)]; (named && !t.escaped) || isNumberLike(t.text) && !strings.Contains(t.text, ".") {
		// a number is a value unless arithmetic follows it
		return !isArithOrRel(after) && !isOp(after, "[")
	}
	return true
}

func (p *parser) parseTerm(inh qual) (node, qual, error) {
	if isNot(p.peek()) {
		p.next()
		n, q, err := p.parseTerm(inh)
		if err != nil {
			return nil, q, err
		}
		return nNot{n}, q, nil
	}
	return p.parseRTerm(inh)
}

// arithAhead reports whether the "(" at the current token opens
// arithmetic (a comparison follows its ")") rather than an expression.
func (p *parser) arithAhead() bool {
	depth := 0
	for k := 0; p.i+k < len(p.toks); k++ {
		t := p.peekAt(k)
		switch {
		case t.kind == tkEOF:
			return false
		case isOp(t, "("):
			depth++
		case isOp(t, ")"):
			depth--
			if depth == 0 {
				return isArithOrRel(p.peekAt(k + 1))
			}
		}
	}
	return false
}

func (p *parser) parseRTerm(inh qual) (node, qual, error) {
	t := p.peek()
	switch {
	case t.kind == tkEOF:
		return nil, qual{}, p.errAt(t.pos, "expected a primitive (host, net, port, portrange, ip, ip6, tcp, udp, ether, vlan, a comparison…)")
	case isOp(t, "("):
		if p.arithAhead() {
			return p.parseRelation()
		}
		p.next()
		n, _, err := p.parseExpr(inh)
		if err != nil {
			return nil, qual{}, err
		}
		if c := p.peek(); !isOp(c, ")") {
			return nil, qual{}, p.errAt(c.pos, "expected \")\" to close the \"(\" of column %d", t.pos+1)
		}
		p.next()
		return n, inh, nil
	case isOp(t, "-"):
		return p.parseRelation()
	case t.kind == tkOp:
		return nil, qual{}, p.errAt(t.pos, "unexpected %q", t.text)
	}
	w := kw(t)
	if _, isProto := protoNames[w]; isProto && isOp(p.peekAt(1), "[") {
		return p.parseRelation()
	}
	if w == "len" {
		return p.parseRelation()
	}
	if w == "" {
		if _, named := namedNumbers[strings.ToLower(t.text)]; (named && !t.escaped) || isNumberLike(t.text) && !strings.Contains(t.text, ".") && !strings.Contains(t.text, ":") && !isMAC(t.text) {
			return p.parseRelation()
		}
		if isNumberLike(t.text) || strings.ContainsAny(t.text, ".:") {
			return nil, qual{}, p.errAt(t.pos, "%q needs a qualifier before it (host, net, port…)", t.text)
		}
		return nil, qual{}, p.errAt(t.pos, "%q is not a capture filter keyword", t.text)
	}
	if unsupportedWords[w] {
		return nil, qual{}, p.errAt(t.pos, "%q is pcap-filter syntax this compiler does not support", t.text)
	}
	switch w {
	case "vlan":
		n, err := p.parseVLAN()
		return n, qual{}, err
	case "less", "greater":
		p.next()
		v, err := p.number("after " + w)
		if err != nil {
			return nil, qual{}, err
		}
		// less: len <= v; greater: len >= v
		if w == "less" {
			return nNot{rel(aLen{}, aConst(v), bpf.JumpGreaterThan)}, qual{}, nil
		}
		return rel(aLen{}, aConst(v), bpf.JumpGreaterOrEqual), qual{}, nil
	case "inbound", "outbound":
		p.next()
		n, err := p.genInbound(t, w == "outbound")
		return n, qual{}, err
	case "and", "or":
		return nil, qual{}, p.errAt(t.pos, "expected a primitive before %q", t.text)
	case "mask", "len":
		return nil, qual{}, p.errAt(t.pos, "unexpected %q", t.text)
	}
	// head: [pname] (dir [type] | type | proto | gateway), or a lone pname,
	// or [pname] broadcast/multicast.
	q := qual{ok: true}
	var protoTok token
	if pr, ok := protoNames[w]; ok {
		q.proto = pr
		protoTok = p.next()
		w = kw(p.peek())
	}
	switch w {
	case "broadcast", "multicast":
		bt := p.next()
		n, err := p.genCast(bt, q.proto, w == "broadcast")
		return n, qual{}, err
	case "src", "dst":
		p.next()
		q.dir = dSrc
		if w == "dst" {
			q.dir = dDst
		}
		if a, b := p.peek(), kw(p.peekAt(1)); (isAnd(a) || isOr(a)) && (b == "src" || b == "dst") && b != w {
			q.dir = dOr
			if isAnd(a) {
				q.dir = dAnd
			}
			p.next()
			p.next()
		}
		if a, ok := addrNames[kw(p.peek())]; ok {
			if a == aGateway {
				return nil, qual{}, p.errAt(p.peek().pos, "\"gateway\" takes no direction")
			}
			q.addr = a
			p.next()
		}
	case "host", "net", "port", "portrange", "gateway":
		at := p.next()
		q.addr = addrNames[w]
		if q.addr == aGateway {
			return nil, qual{}, p.errAt(at.pos, "\"gateway\" is not supported (it needs host names resolved)")
		}
	case "proto":
		p.next()
		q.addr = aProto
	default:
		if protoTok.kind == tkEOF {
			return nil, qual{}, p.errAt(t.pos, "unexpected %q", t.text)
		}
		// a lone protocol: "tcp", "ip6"
		if n := p.peek(); n.kind == tkWord && !isAnd(n) && !isOr(n) {
			return nil, qual{}, p.errAt(n.pos, "%q is not a qualifier of %q (want %s)", n.text, protoTok.text, qualifiersOf(q.proto))
		}
		n, err := p.genProtoAbbrev(protoTok, q.proto)
		return n, qual{}, err
	}
	v := p.peek()
	if v.kind == tkEOF || v.kind == tkWord && kw(v) != "" && kw(v) != "not" || v.kind == tkOp && !isOp(v, "(", "!") {
		last := p.toks[p.i-1]
		return nil, qual{}, p.errAt(v.pos, "expected a value after %q", last.text)
	}
	return p.parseID(q)
}

// qualifiersOf lists what may follow a protocol qualifier.
func qualifiersOf(pr proto) string {
	switch pr {
	case pTCP, pUDP, pSCTP:
		return "src, dst, port or portrange"
	case pLink:
		return "src, dst, host, proto, broadcast or multicast"
	case pIP, pIP6:
		return "src, dst, host, net, proto or multicast"
	case pARP, pRARP:
		return "src, dst, host or net"
	}
	return "and, or"
}

// parseID reads a value, or values in parentheses joined by and/or, or
// a negated one, with the qualifiers q.
func (p *parser) parseID(q qual) (node, qual, error) {
	t := p.peek()
	if isNot(t) {
		p.next()
		n, q2, err := p.parseID(q)
		if err != nil {
			return nil, q2, err
		}
		return nNot{n}, q2, nil
	}
	if isOp(t, "(") {
		p.next()
		n, _, err := p.parseID(q)
		if err != nil {
			return nil, q, err
		}
		for {
			c := p.peek()
			if isOp(c, ")") {
				p.next()
				return n, q, nil
			}
			and, or := isAnd(c), isOr(c)
			if !and && !or {
				return nil, q, p.errAt(c.pos, "expected \")\" to close the \"(\" of column %d", t.pos+1)
			}
			p.next()
			m, _, err := p.parseID(q)
			if err != nil {
				return nil, q, err
			}
			n = join(and, n, m)
		}
	}
	if t.kind != tkWord || kw(t) != "" {
		if t.kind == tkEOF {
			return nil, q, p.errAt(t.pos, "expected a value")
		}
		return nil, q, p.errAt(t.pos, "expected a value, not %q", t.text)
	}
	if !q.ok {
		return nil, q, p.errAt(t.pos, "%q has no qualifier (host, net, port…) and the term before it has none to repeat", t.text)
	}
	p.next()
	n, err := p.genValue(t, q)
	return n, q, err
}

// number reads a NUM token.
func (p *parser) number(what string) (uint32, error) {
	t := p.peek()
	if t.kind == tkWord && !t.escaped {
		if v, ok := namedNumbers[strings.ToLower(t.text)]; ok {
			p.next()
			return v, nil
		}
		if v, ok := parseNum(t.text); ok {
			p.next()
			return v, nil
		}
	}
	if t.kind == tkEOF {
		return 0, p.errAt(t.pos, "expected a number %s", what)
	}
	return 0, p.errAt(t.pos, "%q is not a number", t.text)
}

// maskLength reads "/BITS", the "/" next, and checks BITS against the
// address's width; at is where BITS is.
func (p *parser) maskLength(width uint32) (bits uint32, at int, err error) {
	p.next()
	at = p.peek().pos
	if bits, err = p.number("after \"/\""); err != nil {
		return 0, at, err
	}
	if bits > width {
		return 0, at, p.errAt(at, "mask length must be <= %d", width)
	}
	return bits, at, nil
}

// genValue generates the primitive of one value with its qualifiers.
func (p *parser) genValue(t token, q qual) (node, error) {
	w := t.text
	if !t.escaped {
		if mac, ok := parseMAC(w); ok && !isIPv6(w) || ok && strings.Count(w, ":") == 5 && !strings.Contains(w, "::") {
			return p.genEther(t, mac, q)
		}
		if isIPv6(w) {
			bits := 128
			if isOp(p.peek(), "/") {
				v, at, err := p.maskLength(128)
				if err != nil {
					return nil, err
				}
				bits = int(v)
				if q.addr == aDefault || q.addr == aHost {
					return nil, p.errAt(at, "mask syntax is for networks only (net %s/%d)", w, v)
				}
			}
			return p.genHost6(t, netip.MustParseAddr(w), bits, q)
		}
		if v, bits, ok := parseIPv4(w); ok && strings.Contains(w, ".") {
			return p.genIPv4(t, v, bits, q)
		}
		if v, ok := namedNumbers[strings.ToLower(w)]; ok {
			return p.genNumber(t, v, q)
		}
		if isNumberLike(w) {
			v, ok := parseNum(w)
			if !ok {
				return nil, p.errAt(t.pos, "%q is not a number (at most 32 bits)", w)
			}
			if isOp(p.peek(), "/") {
				return nil, p.errAt(p.peek().pos, "a network is ADDRESS/BITS with a dotted address (10.0.0.0/8)")
			}
			return p.genNumber(t, v, q)
		}
	}
	return p.genName(t, q)
}

// genIPv4 is a dotted address: a host, or a network with /BITS or mask.
func (p *parser) genIPv4(t token, v uint32, bits int, q qual) (node, error) {
	switch q.addr {
	case aPort, aPortrange, aProto:
		return nil, p.errAt(t.pos, "'%s' modifier applied to ip host", addrWord(q.addr))
	}
	masked := false
	mask := uint32(0xffffffff)
	// libpcap promotes a short address ("10.1") to the high bits.
	v <<= 32 - bits
	mask <<= 32 - bits
	if bits == 0 {
		mask = 0
	}
	switch {
	case isOp(p.peek(), "/"):
		n, _, err := p.maskLength(32)
		if err != nil {
			return nil, err
		}
		mask = 0
		if n > 0 {
			mask = 0xffffffff << (32 - n)
		}
		masked = true
	case kw(p.peek()) == "mask":
		p.next()
		mt := p.peek()
		m, mbits, ok := parseIPv4(mt.text)
		if mt.kind != tkWord || !ok {
			return nil, p.errAt(mt.pos, "expected a dotted mask (255.255.255.0) after \"mask\"")
		}
		p.next()
		mask = m << (32 - mbits)
		masked = true
	}
	if masked {
		if q.addr != aNet {
			return nil, p.errAt(t.pos, "mask syntax is for networks only (net %s)", t.text)
		}
		if v&^mask != 0 {
			return nil, p.errAt(t.pos, "non-network bits set in %q", t.text)
		}
	}
	return p.genHost(t, v, mask, q)
}

// genNumber is a plain number: a port, a protocol, or a host or network
// given as a number.
func (p *parser) genNumber(t token, v uint32, q qual) (node, error) {
	switch q.addr {
	case aDefault, aHost, aNet:
		if q.proto == pLink {
			return nil, p.errAt(t.pos, "%q is not an Ethernet address (aa:bb:cc:dd:ee:ff)", t.text)
		}
		mask := uint32(0xffffffff)
		if q.addr == aNet {
			for v != 0 && v&0xff000000 == 0 {
				v <<= 8
				mask <<= 8
			}
		}
		return p.genHost(t, v, mask, q)
	case aPort, aPortrange:
		if v > 65535 {
			return nil, p.errAt(t.pos, "%q is not a port number (0-65535)", t.text)
		}
		return p.genPort(t, v, v, q)
	case aProto:
		return p.genProto(t, v, q)
	}
	return nil, p.errAt(t.pos, "unexpected %q", t.text)
}

// genName is a word that is no number or address: a port range, a
// protocol name, or a host name (not resolved).
func (p *parser) genName(t token, q qual) (node, error) {
	w := t.text
	switch q.addr {
	case aPortrange:
		lo, hi, ok := strings.Cut(w, "-")
		a, aok := parseNum(lo)
		b, bok := parseNum(hi)
		if !ok || !aok || !bok || !isNumberLike(lo) || !isNumberLike(hi) {
			return nil, p.errAt(t.pos, "%q is not a port range (LOW-HIGH)", w)
		}
		if a > 65535 || b > 65535 {
			return nil, p.errAt(t.pos, "%q is not a port range (ports are 0-65535)", w)
		}
		if a > b {
			a, b = b, a
		}
		return p.genPort(t, a, b, q)
	case aPort:
		return nil, p.errAt(t.pos, "%q is not a port number (0-65535)", w)
	case aProto:
		name := strings.ToLower(w)
		if q.proto == pLink {
			if v, ok := etherProtoNames[name]; ok {
				return p.genProto(t, v, q)
			}
			return nil, p.errAt(t.pos, "%q is not an EtherType name (ip, ip6, arp, rarp, or a number)", w)
		}
		if v, ok := ipProtoNames[name]; ok {
			return p.genProto(t, v, q)
		}
		return nil, p.errAt(t.pos, "%q is not an IP protocol name (tcp, udp, icmp, icmp6, sctp, igmp, or a number)", w)
	case aNet:
		return nil, p.errAt(t.pos, "%q is not a network (ADDRESS/BITS)", w)
	}
	if q.proto == pLink {
		return nil, p.errAt(t.pos, "%q is not an Ethernet address (aa:bb:cc:dd:ee:ff)", w)
	}
	return nil, p.errAt(t.pos, "%q is not an IP address (host names are not resolved)", w)
}

var etherProtoNames = map[string]uint32{"ip": 0x0800, "ip6": 0x86dd, "arp": 0x0806, "rarp": 0x8035, "vlan": 0x8100}

var ipProtoNames = map[string]uint32{"icmp": 1, "igmp": 2, "tcp": 6, "udp": 17, "ipv6": 41, "gre": 47, "esp": 50, "ah": 51, "icmp6": 58, "sctp": 132}

func addrWord(a addrType) string {
	for n, v := range addrNames {
		if v == a {
			return n
		}
	}
	if a == aProto {
		return "proto"
	}
	return "host"
}

// parseVLAN reads "vlan [ID]": 802.1Q, 802.1ad or QinQ TPID, and the VLAN
// ID; then the offsets of what follows move past the tag.
func (p *parser) parseVLAN() (node, error) {
	t := p.next()
	if p.link.kind != kindEthernet {
		return nil, p.errAt(t.pos, "vlan is not supported for link type %s", p.link.name)
	}
	n := p.tpidTest()
	if nt := p.peek(); nt.kind == tkWord && kw(nt) == "" && !isNot(nt) {
		if _, isNum := parseNum(nt.text); isNum || namedNumbers[strings.ToLower(nt.text)] != 0 {
			v, err := p.number("after vlan")
			if err != nil {
				return nil, err
			}
			if v > 0x0fff {
				return nil, p.errAt(nt.pos, "VLAN ID %d greater than maximum 4095", v)
			}
			n = nAnd{n, rel(mask(loadAbs(p.offLinkPL, 2), 0x0fff), aConst(v), bpf.JumpEqual)}
		}
	}
	p.offLinkPL += 4
	p.offLinkType += 4
	p.vlanDepth++
	return n, nil
}

func (p *parser) tpidTest() node {
	return nOr{nOr{p.linkType(0x8100), p.linkType(0x88a8)}, p.linkType(0x9100)}
}

// parseRelation reads "arith relop arith".
func (p *parser) parseRelation() (node, qual, error) {
	var guards []node
	l, err := p.parseArith(1, &guards)
	if err != nil {
		return nil, qual{}, err
	}
	t := p.peek()
	op, ok := relops[t.text]
	if t.kind != tkOp || !ok {
		return nil, qual{}, p.errAt(t.pos, "expected a comparison (=, !=, <, <=, >, >=)")
	}
	p.next()
	r, err := p.parseArith(1, &guards)
	if err != nil {
		return nil, qual{}, err
	}
	var n node = rel(l, r, op.cond)
	if op.neg {
		n = nNot{n}
	}
	for i := len(guards) - 1; i >= 0; i-- {
		n = nAnd{guards[i], n}
	}
	return n, qual{}, nil
}

func (p *parser) parseArith(minPrec int, guards *[]node) (arith, error) {
	l, err := p.parseUnary(guards)
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		prec, ok := arithPrec[t.text]
		if t.kind != tkOp || !ok || prec < minPrec {
			return l, nil
		}
		p.next()
		r, err := p.parseArith(prec+1, guards)
		if err != nil {
			return nil, err
		}
		if l, err = p.binary(t, l, r); err != nil {
			return nil, err
		}
	}
}

var aluOps = map[string]bpf.ALUOp{"+": bpf.ALUOpAdd, "-": bpf.ALUOpSub, "*": bpf.ALUOpMul, "/": bpf.ALUOpDiv,
	"%": bpf.ALUOpMod, "&": bpf.ALUOpAnd, "|": bpf.ALUOpOr, "^": bpf.ALUOpXor, "<<": bpf.ALUOpShiftLeft, ">>": bpf.ALUOpShiftRight}

func (p *parser) binary(t token, l, r arith) (arith, error) {
	op := aluOps[t.text]
	if c, ok := r.(aConst); ok {
		if (op == bpf.ALUOpDiv || op == bpf.ALUOpMod) && c == 0 {
			return nil, p.errAt(t.pos, "division by zero")
		}
		if (op == bpf.ALUOpShiftLeft || op == bpf.ALUOpShiftRight) && c > 31 {
			return nil, p.errAt(t.pos, "shift by more than 31 bits")
		}
	}
	return aBin{op: op, l: l, r: r, pos: t.pos}, nil
}

// parseUnary reads an operand. "^" and "%" have no precedence in
// libpcap's grammar, so yacc shifts them: they take the operand just
// read on their left and everything on their right.
func (p *parser) parseUnary(guards *[]node) (arith, error) {
	var x arith
	if t := p.peek(); isOp(t, "-") {
		p.next()
		y, err := p.parseUnary(guards)
		if err != nil {
			return nil, err
		}
		return aNeg{y}, nil
	}
	x, err := p.parsePrimary(guards)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); isOp(t, "^", "%") {
		p.next()
		r, err := p.parseArith(1, guards)
		if err != nil {
			return nil, err
		}
		return p.binary(t, x, r)
	}
	return x, nil
}

func (p *parser) parsePrimary(guards *[]node) (arith, error) {
	t := p.peek()
	if isOp(t, "(") {
		p.next()
		x, err := p.parseArith(1, guards)
		if err != nil {
			return nil, err
		}
		if c := p.peek(); !isOp(c, ")") {
			return nil, p.errAt(c.pos, "expected \")\" to close the \"(\" of column %d", t.pos+1)
		}
		p.next()
		return x, nil
	}
	if t.kind != tkWord {
		return nil, p.errAt(t.pos, "expected a number, len or PROTO[OFFSET]")
	}
	w := kw(t)
	if w == "len" {
		p.next()
		return aLen{}, nil
	}
	if pr, ok := protoNames[w]; ok && isOp(p.peekAt(1), "[") {
		p.next()
		return p.parseLoad(t, pr, guards)
	}
	if w != "" {
		return nil, p.errAt(t.pos, "expected a number, len or PROTO[OFFSET], not %q", t.text)
	}
	v, err := p.number("")
	if err != nil {
		return nil, err
	}
	return aConst(v), nil
}

// parseLoad reads "[OFFSET]" or "[OFFSET:SIZE]" after a protocol name.
func (p *parser) parseLoad(pt token, pr proto, guards *[]node) (arith, error) {
	p.next() // [
	var inner []node
	idx, err := p.parseArith(1, &inner)
	if err != nil {
		return nil, err
	}
	size := uint32(1)
	if isOp(p.peek(), ":") {
		p.next()
		st := p.peek()
		if size, err = p.number("after \":\""); err != nil {
			return nil, err
		}
		if size != 1 && size != 2 && size != 4 {
			return nil, p.errAt(st.pos, "data size must be 1, 2, or 4")
		}
	}
	if c := p.peek(); !isOp(c, "]") {
		return nil, p.errAt(c.pos, "expected \"]\"")
	}
	p.next()
	ld := aLoad{idx: idx, size: int(size)}
	var guard node
	switch pr {
	case pLink:
		ld.base = 0
	case pIP:
		ld.base, guard = p.offLinkPL, p.linkType(0x0800)
	case pIP6:
		ld.base, guard = p.offLinkPL, p.linkType(0x86dd)
	case pARP:
		ld.base, guard = p.offLinkPL, p.linkType(0x0806)
	case pRARP:
		ld.base, guard = p.offLinkPL, p.linkType(0x8035)
	case pTCP, pUDP, pSCTP, pICMP, pIGMP:
		// after the IPv4 header, in IPv4 packets of that protocol that
		// are not a fragment after the first
		ld.base, ld.transport = p.offLinkPL, true
		guard = nAnd{nAnd{p.linkType(0x0800), p.cmp(p.offLinkPL+9, 1, ipProto(pr))}, p.notFragment()}
	case pICMP6:
		// after the fixed IPv6 header, when it is ICMPv6 directly
		ld.base = p.offLinkPL + 40
		guard = nAnd{p.linkType(0x86dd), p.cmp(p.offLinkPL+6, 1, 58)}
	}
	*guards = append(*guards, inner...)
	if guard != nil {
		*guards = append(*guards, guard)
	}
	return ld, nil
}

func ipProto(pr proto) uint32 {
	return map[proto]uint32{pTCP: 6, pUDP: 17, pSCTP: 132, pICMP: 1, pIGMP: 2, pICMP6: 58}[pr]
}

// The primitives, as libpcap's gencode.c builds them.

// cmp tests the size-octet field at off (from the start of the frame).
func (p *parser) cmp(off, size int, v uint32) node {
	return rel(loadAbs(off, size), aConst(v), bpf.JumpEqual)
}

// linkType tests the link layer's protocol (gen_linktype).
func (p *parser) linkType(etherType uint32) node {
	switch p.link.kind {
	case kindEthernet, kindSLL:
		if etherType <= 1500 {
			// an 802.2 LLC SAP: a length, not a type, then the DSAP
			if p.link.kind == kindSLL {
				return nAnd{p.cmp(p.offLinkType, 2, 4), p.cmp(p.offLinkPL, 1, etherType)}
			}
			return nAnd{nNot{rel(loadAbs(p.offLinkType, 2), aConst(1500), bpf.JumpGreaterThan)}, p.cmp(p.offLinkPL, 1, etherType)}
		}
		return p.cmp(p.offLinkType, 2, etherType)
	case kindSLL2:
		return p.cmp(p.offLinkType, 2, etherType)
	case kindRaw:
		switch etherType {
		case 0x0800:
			return rel(mask(loadAbs(0, 1), 0xf0), aConst(0x40), bpf.JumpEqual)
		case 0x86dd:
			return rel(mask(loadAbs(0, 1), 0xf0), aConst(0x60), bpf.JumpEqual)
		}
		return nConst(false)
	case kindIPv4:
		return nConst(etherType == 0x0800)
	case kindIPv6:
		return nConst(etherType == 0x86dd)
	}
	return nConst(false)
}

// notFragment: the IPv4 fragment offset is 0.
func (p *parser) notFragment() node {
	return nNot{rel(loadAbs(p.offLinkPL+6, 2), aConst(0x1fff), bpf.JumpBitsSet)}
}

// ipProtoTest is "ip proto v" (IPv4) or "ip6 proto v" (IPv6, also after
// one fragment header).
func (p *parser) ipProtoTest(v uint32, v6 bool) node {
	if !v6 {
		return nAnd{p.linkType(0x0800), p.cmp(p.offLinkPL+9, 1, v)}
	}
	direct := p.cmp(p.offLinkPL+6, 1, v)
	frag := nAnd{p.cmp(p.offLinkPL+6, 1, 44), p.cmp(p.offLinkPL+40, 1, v)}
	return nAnd{p.linkType(0x86dd), nOr{direct, frag}}
}

func (p *parser) genProtoAbbrev(t token, pr proto) (node, error) {
	switch pr {
	case pIP:
		return p.linkType(0x0800), nil
	case pIP6:
		return p.linkType(0x86dd), nil
	case pARP:
		return p.linkType(0x0806), nil
	case pRARP:
		return p.linkType(0x8035), nil
	case pTCP, pUDP, pSCTP:
		v := ipProto(pr)
		return nOr{p.ipProtoTest(v, false), p.ipProtoTest(v, true)}, nil
	case pICMP, pIGMP:
		return p.ipProtoTest(ipProto(pr), false), nil
	case pICMP6:
		return p.ipProtoTest(58, true), nil
	}
	return nil, p.errAt(t.pos, "%q alone is not a primitive (want ether host, ether src, ether dst, ether proto…)", t.text)
}

// genProto is "[ip|ip6|ether] proto V".
func (p *parser) genProto(t token, v uint32, q qual) (node, error) {
	if q.dir != dDefault {
		return nil, p.errAt(t.pos, "a direction (src, dst) does not apply to proto")
	}
	switch q.proto {
	case pDefault:
		if v > 255 {
			return nil, p.errAt(t.pos, "protocol %d greater than maximum 255", v)
		}
		return nOr{p.ipProtoTest(v, false), p.ipProtoTest(v, true)}, nil
	case pIP, pIP6:
		if v > 255 {
			return nil, p.errAt(t.pos, "protocol %d greater than maximum 255", v)
		}
		return p.ipProtoTest(v, q.proto == pIP6), nil
	case pLink:
		if v > 65535 {
			return nil, p.errAt(t.pos, "EtherType %d greater than maximum 65535", v)
		}
		switch v {
		case 0x06, 0xe0, 0xf0, 0xfe, 0x809b, 0x80f3:
			// LLC SAPs and AppleTalk types that libpcap tests with
			// SNAP/LLC headers
			return nil, p.errAt(t.pos, "ether proto %#x is not supported by this compiler", v)
		}
		return p.linkType(v), nil
	}
	return nil, p.errAt(t.pos, "%s does not encapsulate a protocol given by \"proto\"", q.proto)
}

// genHost is an IPv4 host or network (gen_host).
func (p *parser) genHost(t token, v, mask uint32, q qual) (node, error) {
	typ := "host"
	if q.addr == aNet {
		typ = "net"
	}
	switch q.proto {
	case pDefault:
		ip, _ := p.hostOp(v, mask, q.dir, 0x0800, 12, 16)
		arp, _ := p.hostOp(v, mask, q.dir, 0x0806, 14, 24)
		rarp, _ := p.hostOp(v, mask, q.dir, 0x8035, 14, 24)
		return nOr{nOr{ip, arp}, rarp}, nil
	case pIP:
		n, _ := p.hostOp(v, mask, q.dir, 0x0800, 12, 16)
		return n, nil
	case pARP, pRARP:
		et := uint32(0x0806)
		if q.proto == pRARP {
			et = 0x8035
		}
		n, _ := p.hostOp(v, mask, q.dir, et, 14, 24)
		return n, nil
	case pIP6:
		return nil, p.errAt(t.pos, "'ip6' modifier applied to ip %s", typ)
	case pLink:
		return nil, p.errAt(t.pos, "%q is not an Ethernet address (aa:bb:cc:dd:ee:ff)", t.text)
	}
	return nil, p.errAt(t.pos, "'%s' modifier applied to %s", q.proto, typ)
}

func (p *parser) hostOp(v, mask uint32, d dir, et uint32, srcOff, dstOff int) (node, bool) {
	at := func(off int) node {
		var a arith = loadAbs(p.offLinkPL+off, 4)
		if mask != 0xffffffff {
			a = aBin{op: bpf.ALUOpAnd, l: a, r: aConst(mask)}
		}
		return rel(a, aConst(v&mask), bpf.JumpEqual)
	}
	lt := p.linkType(et)
	switch d {
	case dSrc:
		return nAnd{lt, at(srcOff)}, true
	case dDst:
		return nAnd{lt, at(dstOff)}, true
	case dAnd:
		return nAnd{nAnd{lt, at(srcOff)}, nAnd{p.linkType(et), at(dstOff)}}, true
	}
	return nAnd{lt, nOr{at(srcOff), at(dstOff)}}, true
}

// genHost6 is an IPv6 host or network.
func (p *parser) genHost6(t token, a netip.Addr, bits int, q qual) (node, error) {
	typ := "host"
	if q.addr == aNet {
		typ = "net"
	}
	switch q.addr {
	case aDefault, aHost, aNet:
	default:
		return nil, p.errAt(t.pos, "'%s' modifier applied to ip6 address", addrWord(q.addr))
	}
	switch q.proto {
	case pDefault, pIP6:
	case pIP:
		return nil, p.errAt(t.pos, "'ip' modifier applied to ip6 %s", typ)
	case pLink:
		return nil, p.errAt(t.pos, "%q is not an Ethernet address (aa:bb:cc:dd:ee:ff)", t.text)
	default:
		return nil, p.errAt(t.pos, "'%s' modifier applied to ip6 %s", q.proto, typ)
	}
	addr := a.As16()
	var words, masks [4]uint32
	for i := 0; i < 4; i++ {
		words[i] = uint32(addr[4*i])<<24 | uint32(addr[4*i+1])<<16 | uint32(addr[4*i+2])<<8 | uint32(addr[4*i+3])
		b := bits - 32*i
		switch {
		case b >= 32:
			masks[i] = 0xffffffff
		case b <= 0:
			masks[i] = 0
		default:
			masks[i] = 0xffffffff << (32 - b)
		}
		if words[i]&^masks[i] != 0 {
			return nil, p.errAt(t.pos, "non-network bits set in \"%s/%d\"", t.text, bits)
		}
	}
	at := func(off int) node {
		// Words the mask leaves out are not read (libpcap's optimizer
		// drops their always-true tests, so a short packet is not
		// rejected for lacking them).
		var n node
		for i := 3; i >= 0; i-- {
			if masks[i] == 0 {
				continue
			}
			var ld arith = loadAbs(p.offLinkPL+off+4*i, 4)
			if masks[i] != 0xffffffff {
				ld = aBin{op: bpf.ALUOpAnd, l: ld, r: aConst(masks[i])}
			}
			c := rel(ld, aConst(words[i]), bpf.JumpEqual)
			if n == nil {
				n = c
			} else {
				n = nAnd{c, n}
			}
		}
		if n == nil {
			return nConst(true)
		}
		return n
	}
	lt := p.linkType(0x86dd)
	switch q.dir {
	case dSrc:
		return nAnd{lt, at(8)}, nil
	case dDst:
		return nAnd{lt, at(24)}, nil
	case dAnd:
		return nAnd{lt, nAnd{at(8), at(24)}}, nil
	}
	return nAnd{lt, nOr{at(8), at(24)}}, nil
}

// genEther is "ether host/src/dst MAC".
func (p *parser) genEther(t token, mac [6]byte, q qual) (node, error) {
	if q.proto != pLink || (q.addr != aDefault && q.addr != aHost) {
		return nil, p.errAt(t.pos, "ethernet address used in non-ether expression (ether host %s)", t.text)
	}
	if p.link.kind != kindEthernet {
		return nil, p.errAt(t.pos, "Ethernet addresses are not supported for link type %s", p.link.name)
	}
	at := func(off int) node {
		w := uint32(mac[2])<<24 | uint32(mac[3])<<16 | uint32(mac[4])<<8 | uint32(mac[5])
		return nAnd{p.cmp(off+2, 4, w), p.cmp(off, 2, uint32(mac[0])<<8|uint32(mac[1]))}
	}
	switch q.dir {
	case dSrc:
		return at(6), nil
	case dDst:
		return at(0), nil
	case dAnd:
		return nAnd{at(6), at(0)}, nil
	}
	return nOr{at(6), at(0)}, nil
}

// genPort is port (lo == hi) or portrange over TCP, UDP and SCTP (or the
// one protocol qualified), IPv4 and IPv6.
func (p *parser) genPort(t token, lo, hi uint32, q qual) (node, error) {
	var protos []uint32
	switch q.proto {
	case pDefault:
		protos = []uint32{6, 17, 132}
	case pTCP, pUDP, pSCTP:
		protos = []uint32{ipProto(q.proto)}
	default:
		return nil, p.errAt(t.pos, "illegal qualifier of '%s': %s", addrWord(q.addr), q.proto)
	}
	match := func(ld arith) node {
		if lo == hi {
			return rel(ld, aConst(lo), bpf.JumpEqual)
		}
		return nAnd{rel(ld, aConst(lo), bpf.JumpGreaterOrEqual), nNot{rel(ld, aConst(hi), bpf.JumpGreaterThan)}}
	}
	ports := func(at func(off int) arith) node {
		switch q.dir {
		case dSrc:
			return match(at(0))
		case dDst:
			return match(at(2))
		case dAnd:
			return nAnd{match(at(0)), match(at(2))}
		}
		return nOr{match(at(0)), match(at(2))}
	}
	v4 := func(off int) arith { return aLoad{base: p.offLinkPL, transport: true, idx: aConst(off), size: 2} }
	v6 := func(off int) arith { return loadAbs(p.offLinkPL+40+off, 2) }
	var four, six node
	for _, pr := range protos {
		f := nAnd{nAnd{p.cmp(p.offLinkPL+9, 1, pr), p.notFragment()}, ports(v4)}
		s := nAnd{p.cmp(p.offLinkPL+6, 1, pr), ports(v6)}
		if four == nil {
			four, six = f, s
		} else {
			four, six = nOr{four, f}, nOr{six, s}
		}
	}
	return nOr{nAnd{p.linkType(0x0800), four}, nAnd{p.linkType(0x86dd), six}}, nil
}

// genInbound is inbound/outbound: the Linux cooked header's packet type.
func (p *parser) genInbound(t token, outbound bool) (node, error) {
	var n node
	switch p.link.kind {
	case kindSLL:
		n = p.cmp(0, 2, 4) // PACKET_OUTGOING
	case kindSLL2:
		n = p.cmp(10, 1, 4)
	default:
		return nil, p.errAt(t.pos, "%s is not supported for link type %s (only for Linux cooked captures, -i any)", t.text, p.link.name)
	}
	if outbound {
		return n, nil
	}
	return nNot{n}, nil
}

// genCast is [ether|ip|ip6] broadcast/multicast.
func (p *parser) genCast(t token, pr proto, broadcast bool) (node, error) {
	switch {
	case pr == pDefault || pr == pLink:
		if p.link.kind != kindEthernet {
			return nil, p.errAt(t.pos, "link-layer %s is not supported for link type %s", t.text, p.link.name)
		}
		if broadcast {
			return p.genEther(t, [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, qual{ok: true, proto: pLink, dir: dDst})
		}
		return rel(loadAbs(0, 1), aConst(1), bpf.JumpBitsSet), nil
	case broadcast:
		return nil, p.errAt(t.pos, "%s broadcast is not supported (it needs the interface's netmask)", pr)
	case pr == pIP:
		return nAnd{p.linkType(0x0800), rel(loadAbs(p.offLinkPL+16, 1), aConst(224), bpf.JumpGreaterOrEqual)}, nil
	case pr == pIP6:
		return nAnd{p.linkType(0x86dd), p.cmp(p.offLinkPL+24, 1, 255)}, nil
	}
	return nil, p.errAt(t.pos, "%s %s is not a primitive", pr, t.text)
}
