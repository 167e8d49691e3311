package source

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// FilterError is a capture filter (-f) that is not understood: Pos is the
// 0-based byte offset in Expr where the problem is.
type FilterError struct {
	Expr string
	Pos  int
	Msg  string
}

// Error renders the message, the expression and a caret under the
// position, as the display filter's errors do.
func (e *FilterError) Error() string {
	return fmt.Sprintf("capture filter: %s at column %d\n  %s\n  %s^", e.Msg, e.Pos+1, e.Expr, strings.Repeat(" ", e.Pos))
}

// The capture filter compiler (github.com/packetcap/go-pcap/filter) knows a
// subset of tcpdump's language and compiles some mistakes into a program
// that silently captures something else ("udp prot 4791" captures all of
// UDP). checkFilter parses that subset first, strictly, and gives the
// compiler the expression it checked (with &&, || and ! spelled as words,
// which the compiler does not read):
//
//	expr      = term { ("and" | "&&" | "or" | "||") term }
//	term      = "(" expr ")" | primitive
//	primitive = [proto] [dir] [kind] [value] (at least one; value after
//	            dir or kind; a lone value repeats the previous
//	            primitive's qualifiers: "port 4791 or 20049")
//	proto     = ether | ip | ip4 | ip6 | tcp | udp (ip and ip6 only
//	            with more qualifiers)
//	dir       = src | dst | src or dst | src and dst
//	kind      = host | net | port
//
// Left out because the compiler gets them wrong (TestCaptureFilter-
// SelectsAsTcpdump compares with libpcap): not, portrange, a lone ip or
// ip6; and what it does not have: proto, gateway, vlan, byte offsets.
var (
	capProtos = map[string]bool{"ether": true, "ip": true, "ip4": true, "ip6": true, "tcp": true, "udp": true}
	capDirs   = map[string]bool{"src": true, "dst": true}
	capKinds  = map[string]bool{"host": true, "net": true, "port": true, "portrange": true, "proto": true, "gateway": true}
	capJoin   = map[string]string{"and": "and", "&&": "and", "or": "or", "||": "or"}
)

// capUnsupported are pcap-filter words the compiler does not have.
var capUnsupported = map[string]bool{
	"vlan": true, "mpls": true, "arp": true, "rarp": true, "icmp": true, "icmp6": true, "sctp": true, "len": true,
	"less": true, "greater": true, "broadcast": true, "multicast": true, "inbound": true, "outbound": true,
	"ifname": true, "pppoed": true, "pppoes": true, "geneve": true, "atalk": true, "decnet": true, "iso": true,
}

const capKeywords = "ether, ip, ip6, tcp, udp, src, dst, host, net, port, and, or"

type capTok struct {
	text string
	pos  int
}

func lexCapture(expr string) ([]capTok, error) {
	var toks []capTok
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(' || c == ')' || c == '!':
			toks = append(toks, capTok{expr[i : i+1], i})
			i++
		case strings.HasPrefix(expr[i:], "&&") || strings.HasPrefix(expr[i:], "||"):
			toks = append(toks, capTok{expr[i : i+2], i})
			i += 2
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == ':' || c == '/' || c == '-' || c == '_':
			j := i
			for j < len(expr) {
				c := expr[j]
				if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == ':' || c == '/' || c == '-' || c == '_') {
					break
				}
				j++
			}
			toks = append(toks, capTok{expr[i:j], i})
			i = j
		default:
			return nil, &FilterError{Expr: expr, Pos: i, Msg: fmt.Sprintf("%q is not understood by the built-in compiler (no byte offsets, comparisons or arithmetic)", c)}
		}
	}
	return toks, nil
}

type capParser struct {
	expr string
	toks []capTok
	i    int
	out  []string
	// prev is set once a primitive was read: a lone value repeats its
	// qualifiers (prevProto, prevKind).
	prev                bool
	prevProto, prevKind string
}

func (p *capParser) peek() (capTok, bool) {
	if p.i < len(p.toks) {
		return p.toks[p.i], true
	}
	return capTok{pos: len(p.expr)}, false
}

func (p *capParser) errAt(pos int, format string, args ...any) error {
	return &FilterError{Expr: p.expr, Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

func (p *capParser) emit(s string) { p.out = append(p.out, s) }

// checkFilter validates expr and returns it as the compiler is to read it.
func checkFilter(expr string) (string, error) {
	toks, err := lexCapture(expr)
	if err != nil {
		return "", err
	}
	p := &capParser{expr: expr, toks: toks}
	if err := p.parseExpr(); err != nil {
		return "", err
	}
	if t, ok := p.peek(); ok {
		return "", p.errAt(t.pos, "unexpected %q", t.text)
	}
	// No space inside parentheses: the compiler misreads "( ip6 )".
	out := strings.Join(p.out, " ")
	out = strings.ReplaceAll(strings.ReplaceAll(out, "( ", "("), " )", ")")
	return out, nil
}

func (p *capParser) parseExpr() error {
	if err := p.parseTerm(); err != nil {
		return err
	}
	for {
		t, ok := p.peek()
		if !ok || capJoin[strings.ToLower(t.text)] == "" {
			return nil
		}
		p.i++
		p.emit(capJoin[strings.ToLower(t.text)])
		if err := p.parseTerm(); err != nil {
			return err
		}
	}
}

func (p *capParser) parseTerm() error {
	t, ok := p.peek()
	if !ok {
		return p.errAt(t.pos, "expected a primitive (%s)", capKeywords)
	}
	switch strings.ToLower(t.text) {
	case "not", "!":
		// The compiler gets negation wrong ("tcp and not udp" passes
		// every UDP packet): refused until it is ours.
		return p.errAt(t.pos, "%q: the built-in compiler has no negation", t.text)
	case "(":
		p.i++
		p.emit("(")
		if err := p.parseExpr(); err != nil {
			return err
		}
		c, ok := p.peek()
		if !ok || c.text != ")" {
			return p.errAt(c.pos, "expected \")\" to close the \"(\" of column %d", t.pos+1)
		}
		p.i++
		p.emit(")")
		return nil
	}
	return p.parsePrimitive()
}

func (p *capParser) parsePrimitive() error {
	start, _ := p.peek()
	var proto, dir, kind string
	if t, ok := p.peek(); ok && capProtos[strings.ToLower(t.text)] {
		proto = strings.ToLower(t.text)
		p.i++
		p.emit(proto)
	}
	if t, ok := p.peek(); ok && capDirs[strings.ToLower(t.text)] {
		dir = strings.ToLower(t.text)
		p.i++
		p.emit(dir)
		// "src or dst", "src and dst"
		if p.i+1 < len(p.toks) && capJoin[strings.ToLower(p.toks[p.i].text)] != "" {
			if other := strings.ToLower(p.toks[p.i+1].text); capDirs[other] && other != dir {
				p.emit(capJoin[strings.ToLower(p.toks[p.i].text)])
				p.emit(other)
				p.i += 2
			}
		}
	}
	if t, ok := p.peek(); ok && capKinds[strings.ToLower(t.text)] {
		kind = strings.ToLower(t.text)
		if kind == "portrange" || kind == "proto" || kind == "gateway" {
			// portrange compiles to a program that passes everything.
			return p.errAt(t.pos, "%q is not supported by the built-in compiler", t.text)
		}
		p.i++
		p.emit(kind)
	}
	t, ok := p.peek()
	if !ok || isCapKeyword(t.text) {
		switch {
		case kind != "":
			return p.errAt(t.pos, "expected a value after %q", kind)
		case dir != "":
			return p.errAt(t.pos, "expected a host, net, port or portrange after %q", dir)
		case proto == "ether":
			return p.errAt(t.pos, "expected host, src, dst or proto after \"ether\"")
		case proto == "ip" || proto == "ip4" || proto == "ip6":
			// The compiler's program for a lone ip or ip6 jumps past its
			// end (the kernel would refuse it).
			return p.errAt(start.pos, "%q alone is not supported by the built-in compiler (give host or net, or tcp, udp)", start.text)
		case proto != "":
			p.prev, p.prevProto, p.prevKind = true, proto, ""
			return nil
		}
		if !ok {
			return p.errAt(t.pos, "expected a primitive (%s)", capKeywords)
		}
		return p.errAt(t.pos, "unexpected %q", t.text)
	}
	if proto != "" && dir == "" && kind == "" {
		return p.errAt(t.pos, "%q is not a qualifier of %q (want src, dst, host, net or port)", t.text, proto)
	}
	if proto == "" && dir == "" && kind == "" {
		if !p.prev {
			if capUnsupported[strings.ToLower(t.text)] {
				return p.errAt(t.pos, "%q is tcpdump syntax the built-in compiler does not have (it knows %s)", t.text, capKeywords)
			}
			return p.errAt(t.pos, "%q is not a capture filter keyword (the built-in compiler knows %s)", t.text, capKeywords)
		}
		proto, kind = p.prevProto, p.prevKind
	}
	if err := p.checkValue(t, proto, kind); err != nil {
		return err
	}
	p.i++
	p.emit(t.text)
	p.prev, p.prevProto, p.prevKind = true, proto, kind
	return nil
}

// isCapKeyword reports whether w is a word of the language, never a value.
func isCapKeyword(w string) bool {
	w = strings.ToLower(w)
	return capProtos[w] || capDirs[w] || capKinds[w] || capJoin[w] != "" || w == "not" || w == "!" || w == "(" || w == ")"
}

// checkValue checks a value for its kind: what the compiler would
// otherwise misread or reject without saying where.
func (p *capParser) checkValue(t capTok, proto, kind string) error {
	v := t.text
	switch kind {
	case "port":
		if n, err := strconv.ParseUint(v, 10, 16); err != nil || n > 65535 {
			return p.errAt(t.pos, "%q is not a port number (0-65535)", v)
		}
	case "net":
		if _, err := netip.ParsePrefix(v); err != nil {
			if _, err := netip.ParseAddr(v); err != nil {
				return p.errAt(t.pos, "%q is not a network (ADDRESS/BITS)", v)
			}
		}
	default: // host, gateway, or a host by default
		if proto == "ether" {
			if _, err := net.ParseMAC(v); err != nil {
				return p.errAt(t.pos, "%q is not an Ethernet address (aa:bb:cc:dd:ee:ff)", v)
			}
			return nil
		}
		if _, err := netip.ParseAddr(v); err != nil {
			return p.errAt(t.pos, "%q is not an IP address (host names are not resolved)", v)
		}
	}
	return nil
}
