package capfilter

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// tokKind is a token's class.
type tokKind int

const (
	tkEOF  tokKind = iota
	tkWord         // keyword, number, address or name
	tkOp           // punctuation and operators
)

type token struct {
	kind tokKind
	text string
	pos  int
	// escaped: written with a backslash ("\tcp"), a name, never a
	// keyword.
	escaped bool
}

// operators, longest first.
var operators = []string{"&&", "||", "!=", "==", "<=", ">=", "<<", ">>", "(", ")", "[", "]", ":", "!", "=", "<", ">", "&", "|", "^", "+", "-", "*", "/", "%"}

func isWordStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func isWordChar(c byte) bool {
	return isWordStart(c) || c == '.' || c == '-' || c == ':'
}

// lex splits expr into tokens. A word is a keyword, a number, an IPv4,
// IPv6 or MAC address, a port range ("4791-4792") or a name; a colon
// belongs to a word only when the word is a MAC or IPv6 address (in
// "ip[2:2]" it is the size separator).
func lex(expr string) ([]token, error) {
	var toks []token
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			continue
		case isWordStart(c) || c == '\\' || c == ':' && i+1 < len(expr) && expr[i+1] == ':':
			start := i
			escaped := false
			if c == '\\' {
				escaped = true
				i++
				if i >= len(expr) || !isWordStart(expr[i]) {
					return nil, &Error{Lang: lang, Expr: expr, Pos: start, Msg: "a backslash must be followed by a name (\\tcp)"}
				}
			}
			j := i
			for j < len(expr) && isWordChar(expr[j]) {
				j++
			}
			w := expr[i:j]
			if k := strings.IndexByte(w, ':'); k >= 0 && !isMAC(w) && !isIPv6(w) {
				w = w[:k]
				j = i + k
			}
			if w == "" {
				// "::" that is no IPv6 address
				return nil, &Error{Lang: lang, Expr: expr, Pos: start, Msg: fmt.Sprintf("%q is not an IPv6 address", expr[start:min(start+2, len(expr))])}
			}
			toks = append(toks, token{kind: tkWord, text: w, pos: start, escaped: escaped})
			i = j
			continue
		}
		matched := false
		for _, op := range operators {
			if strings.HasPrefix(expr[i:], op) {
				toks = append(toks, token{kind: tkOp, text: op, pos: i})
				i += len(op)
				matched = true
				break
			}
		}
		if !matched {
			return nil, &Error{Lang: lang, Expr: expr, Pos: i, Msg: fmt.Sprintf("%q is not part of the capture filter language", rune(expr[i]))}
		}
	}
	return append(toks, token{kind: tkEOF, pos: len(expr)}), nil
}

// isMAC reports a MAC address as libpcap writes them: six groups of one
// or two hex digits separated by ':', '-' or '.', or three groups of four
// separated by '.'.
func isMAC(w string) bool {
	_, ok := parseMAC(w)
	return ok
}

func parseMAC(w string) ([6]byte, bool) {
	var mac [6]byte
	for _, sep := range []string{":", "-", "."} {
		parts := strings.Split(w, sep)
		if len(parts) != 6 {
			continue
		}
		ok := true
		for i, p := range parts {
			n, err := strconv.ParseUint(p, 16, 8)
			if err != nil || len(p) == 0 || len(p) > 2 {
				ok = false
				break
			}
			mac[i] = byte(n)
		}
		if ok {
			return mac, true
		}
	}
	if parts := strings.Split(w, "."); len(parts) == 3 {
		for i, p := range parts {
			n, err := strconv.ParseUint(p, 16, 16)
			if err != nil || len(p) != 4 {
				return mac, false
			}
			mac[2*i], mac[2*i+1] = byte(n>>8), byte(n)
		}
		return mac, true
	}
	if hw, err := net.ParseMAC(w); err == nil && len(hw) == 6 {
		copy(mac[:], hw)
		return mac, true
	}
	return mac, false
}

func isIPv6(w string) bool {
	a, err := netip.ParseAddr(w)
	return err == nil && a.Is6() && a.Zone() == ""
}

// parseNum reads a number as libpcap does: decimal, 0x hex, or octal
// with a leading 0; at most 32 bits.
func parseNum(w string) (uint32, bool) {
	base := 10
	digits := w
	switch {
	case len(w) > 2 && (w[:2] == "0x" || w[:2] == "0X"):
		base, digits = 16, w[2:]
	case len(w) > 1 && w[0] == '0':
		base, digits = 8, w[1:]
	}
	n, err := strconv.ParseUint(digits, base, 32)
	if err != nil {
		return 0, false
	}
	return uint32(n), true
}

// isNumberLike: starts as a number does, so a failure to read it is a
// bad number, not a name.
func isNumberLike(w string) bool {
	if w == "" || w[0] < '0' || w[0] > '9' {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == 'x' || c == 'X') {
			return false
		}
	}
	return true
}

// parseIPv4 reads a dotted IPv4 address or network of 1 to 4 parts
// ("10", "10.1", "192.0.2.1"): the value in the low parts*8 bits, and
// that width, as libpcap's __pcap_atoin.
func parseIPv4(w string) (v uint32, bits int, ok bool) {
	parts := strings.Split(w, ".")
	if len(parts) > 4 {
		return 0, 0, false
	}
	for _, p := range parts {
		n, err := strconv.ParseUint(p, 10, 8)
		if err != nil || p == "" {
			return 0, 0, false
		}
		v = v<<8 | uint32(n)
	}
	return v, 8 * len(parts), true
}

// Named numbers of the language (pcap-filter(7)): offsets and values of
// the TCP flags and ICMP fields.
var namedNumbers = map[string]uint32{
	"tcpflags": 13, "tcp-fin": 0x01, "tcp-syn": 0x02, "tcp-rst": 0x04, "tcp-push": 0x08, "tcp-ack": 0x10,
	"tcp-urg": 0x20, "tcp-ece": 0x40, "tcp-cwr": 0x80,
	"icmptype": 0, "icmpcode": 1, "icmp-echoreply": 0, "icmp-unreach": 3, "icmp-sourcequench": 4,
	"icmp-redirect": 5, "icmp-echo": 8, "icmp-routeradvert": 9, "icmp-routersolicit": 10, "icmp-timxceed": 11,
	"icmp-paramprob": 12, "icmp-tstamp": 13, "icmp-tstampreply": 14, "icmp-ireq": 15, "icmp-ireqreply": 16,
	"icmp-maskreq": 17, "icmp-maskreply": 18,
	"icmp6type": 0, "icmp6code": 1, "icmp6-destinationunreach": 1, "icmp6-packettoobig": 2,
	"icmp6-timeexceeded": 3, "icmp6-parameterproblem": 4, "icmp6-echo": 128, "icmp6-echoreply": 129,
	"icmp6-multicastlistenerquery": 130, "icmp6-multicastlistenerreportv1": 131, "icmp6-multicastlistenerdone": 132,
	"icmp6-routersolicit": 133, "icmp6-routeradvert": 134, "icmp6-neighborsolicit": 135,
	"icmp6-neighboradvert": 136, "icmp6-redirect": 137,
}
