// Package dfilter is the display-filter language (-Y), Wireshark-like: it
// compiles an expression over the declared fields and protocols and tests
// dissected records against it.
//
// The language:
//
//	expr    = orExpr
//	orExpr  = andExpr { ("or" | "||") andExpr }
//	andExpr = notExpr { ("and" | "&&") notExpr }
//	notExpr = ("not" | "!") notExpr | primary
//	primary = "(" expr ")" | NAME [ relop value | "contains" value
//	        | ["not"] "in" "{" elem { [","] elem } "}" ]
//	relop   = "==" | "!=" | "~=" | "!==" | "===" | "<" | "<=" | ">" | ">="
//	        | eq ne lt le gt ge any_eq all_ne any_ne all_eq
//	elem    = value | value ".." value
//	value   = number (decimal or 0x hex) | "quoted string" | address
//	        | MAC or bytes (aa:bb:cc) | enum value name | true | false
//
// NAME alone tests presence of a field or a protocol layer; tshark's names
// are accepted too (field.Lookup). A field may occur several times in a
// frame (ip.addr holds the source and the destination); as in tshark 4.x,
// a comparison is true when any occurrence satisfies it, except:
// "!=" (all_ne) is true when the field occurs and no occurrence equals
// the value, i.e. !(a == b) for a frame that has the field; "~=" (!==,
// any_ne) when some occurrence differs; "===" (all_eq) when the field
// occurs and every occurrence equals. A comparison on a field the frame
// lacks is false, "!=" included. "in {…}" is true when an occurrence
// equals an element or lies in a range a..b; elements may be separated by
// commas (tshark 4.x requires them) or by spaces (tshark 3.x).
// Address fields compare with a prefix too: ipv4.src == 10.0.0.0/8.
package dfilter

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/fieldval"
	"github.com/cmpd-dissect/cmpd-dissect/internal/exprerr"
)

// Error is a bad display filter (its Lang is "display filter").
type Error = exprerr.Error

const lang = "display filter"

// Filter is a compiled display filter.
type Filter struct {
	expr string
	root node
	col  *fieldval.Collector
	// needValues is false when the filter only tests protocol presence.
	needValues bool
}

type opKind uint8

const (
	opPresent opKind = iota
	opEq
	opLt
	opLe
	opGt
	opGe
	opContains
	opIn
)

// relop is a comparison operator as written: the test of one
// occurrence (op, negated by neg) and whether every occurrence must pass
// it (all) or one is enough.
type relop struct {
	op       opKind
	neg, all bool
}

var opNames = map[string]relop{
	"==": {op: opEq}, "eq": {op: opEq}, "any_eq": {op: opEq},
	"!=": {op: opEq, neg: true, all: true}, "ne": {op: opEq, neg: true, all: true}, "all_ne": {op: opEq, neg: true, all: true},
	"~=": {op: opEq, neg: true}, "!==": {op: opEq, neg: true}, "any_ne": {op: opEq, neg: true},
	"===": {op: opEq, all: true}, "all_eq": {op: opEq, all: true},
	"<": {op: opLt}, "lt": {op: opLt}, "<=": {op: opLe}, "le": {op: opLe},
	">": {op: opGt}, "gt": {op: opGt}, ">=": {op: opGe}, "ge": {op: opGe},
	"contains": {op: opContains},
}

type node interface {
	eval(f *Filter, r *dissect.Record) bool
}

type andNode struct{ a, b node }
type orNode struct{ a, b node }
type notNode struct{ a node }

func (n andNode) eval(f *Filter, r *dissect.Record) bool { return n.a.eval(f, r) && n.b.eval(f, r) }
func (n orNode) eval(f *Filter, r *dissect.Record) bool  { return n.a.eval(f, r) || n.b.eval(f, r) }
func (n notNode) eval(f *Filter, r *dissect.Record) bool { return !n.a.eval(f, r) }

// protoNode tests that a layer of the protocol is present, or a field of
// it reported inside another layer (pvtdata under the CM private data).
type protoNode struct{ p *field.Proto }

func (n protoNode) eval(f *Filter, r *dissect.Record) bool {
	for _, l := range r.Layers {
		if l.Proto() == n.p {
			return true
		}
	}
	vals := f.col.Values()
	for i := range vals {
		if vals[i].Field.Proto == n.p {
			return true
		}
	}
	return false
}

// cmpNode compares a field with a literal, or with the elements of a set
// (op opIn).
type cmpNode struct {
	fld  *field.Field
	slot int
	op   opKind
	// neg negates the test of each occurrence; all requires every
	// occurrence (at least one) to pass it.
	neg, all bool
	set      []setElem
	// literal, by kind
	u      uint64
	i      int64
	b      bool
	bs     []byte
	s      string
	num    float64 // s as a number, when isNum
	isNum  bool
	prefix netip.Prefix
}

// setElem is an element of an "in" set: a value (lo, hi nil) or a range
// lo..hi, both ends included.
type setElem struct{ lo, hi *cmpNode }

func (n *cmpNode) eval(f *Filter, r *dissect.Record) bool {
	c := f.col
	vals := c.Values()
	seen := false
	for i := range vals {
		v := &vals[i]
		if v.Slot != n.slot {
			continue
		}
		seen = true
		if n.match(c, v) != n.neg {
			if !n.all {
				return true
			}
		} else if n.all {
			return false
		}
	}
	return n.all && seen
}

// match tests one occurrence.
func (n *cmpNode) match(c *fieldval.Collector, v *fieldval.Value) bool {
	if n.op != opIn {
		return n.test(c, v, n.op)
	}
	for _, e := range n.set {
		if e.hi == nil {
			if e.lo.test(c, v, opEq) {
				return true
			}
		} else if e.lo.test(c, v, opGe) && e.hi.test(c, v, opLe) {
			return true
		}
	}
	return false
}

func order(op opKind, c int) bool {
	switch op {
	case opEq:
		return c == 0
	case opLt:
		return c < 0
	case opLe:
		return c <= 0
	case opGt:
		return c > 0
	case opGe:
		return c >= 0
	}
	return false
}

func cmpU(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (n *cmpNode) test(c *fieldval.Collector, v *fieldval.Value, op opKind) bool {
	if op == opPresent {
		return true
	}
	switch n.fld.Kind {
	case field.KindUint, field.KindHex, field.KindMAC, field.KindEUI64:
		return order(op, cmpU(v.Uint, n.u))
	case field.KindInt:
		switch {
		case v.Int < n.i:
			return order(op, -1)
		case v.Int > n.i:
			return order(op, 1)
		}
		return order(op, 0)
	case field.KindBool:
		return order(op, cmpU(b2u(v.Bool), b2u(n.b)))
	case field.KindAddr:
		if n.prefix.IsValid() && n.prefix.Bits() < n.prefix.Addr().BitLen() && op == opEq {
			return n.prefix.Contains(v.Addr.Unmap())
		}
		return order(op, v.Addr.Unmap().Compare(n.prefix.Addr()))
	case field.KindString:
		got := c.BytesOf(v)
		if op == opContains {
			return bytes.Contains(got, n.bs)
		}
		if n.isNum {
			if x, err := strconv.ParseFloat(string(got), 64); err == nil {
				switch {
				case x < n.num:
					return order(op, -1)
				case x > n.num:
					return order(op, 1)
				}
				return order(op, 0)
			}
		}
		return order(op, bytes.Compare(got, n.bs))
	case field.KindBytes:
		got := c.BytesOf(v)
		if op == opContains {
			return bytes.Contains(got, n.bs)
		}
		return order(op, bytes.Compare(got, n.bs))
	case field.KindGroup:
		return false
	}
	return false
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// presenceNode tests that a field occurs.
type presenceNode struct{ slot int }

func (n presenceNode) eval(f *Filter, r *dissect.Record) bool {
	vals := f.col.Values()
	for i := range vals {
		if vals[i].Slot == n.slot {
			return true
		}
	}
	return false
}

// Match reports whether the record passes the filter.
func (f *Filter) Match(r *dissect.Record) bool {
	if f.needValues {
		f.col.Collect(r)
	}
	return f.root.eval(f, r)
}

// String is the expression as given.
func (f *Filter) String() string { return f.expr }

// Compile parses a display filter.
func Compile(expr string) (*Filter, error) {
	p := &parser{src: expr, col: fieldval.New()}
	p.next()
	if p.tok.kind == tkEOF {
		return nil, &Error{Lang: lang, Expr: expr, Pos: 0, Msg: "empty expression"}
	}
	root, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tkEOF {
		return nil, p.errf(p.tok.pos, "unexpected %q", p.tok.text)
	}
	return &Filter{expr: expr, root: root, col: p.col, needValues: len(p.col.Wanted()) > 0}, nil
}

// --- lexer ---

type tokKind uint8

const (
	tkEOF tokKind = iota
	tkWord
	tkString
	tkOp
	tkLParen
	tkRParen
	tkAnd
	tkOr
	tkNot
	tkIn
	tkLBrace
	tkRBrace
	tkComma
	tkRange
	tkBad
)

type token struct {
	kind tokKind
	text string
	pos  int
}

type parser struct {
	src string
	pos int
	tok token
	col *fieldval.Collector
}

func (p *parser) errf(pos int, format string, args ...any) error {
	return &Error{Lang: lang, Expr: p.src, Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '.' || c == ':' || c == '-' || c == '/'
}

// symbols are the punctuation tokens, a longer one before any it begins
// with ("===" before "==", "<=" before "<").
var symbols = []struct {
	text string
	kind tokKind
}{
	{"===", tkOp}, {"!==", tkOp},
	{"..", tkRange}, {"~=", tkOp}, {"&&", tkAnd}, {"||", tkOr},
	{"==", tkOp}, {"!=", tkOp}, {"<=", tkOp}, {">=", tkOp},
	{"(", tkLParen}, {")", tkRParen}, {"{", tkLBrace}, {"}", tkRBrace}, {",", tkComma},
	{"<", tkOp}, {">", tkOp}, {"!", tkNot},
}

func (p *parser) next() {
	s := p.src
	for p.pos < len(s) && (s[p.pos] == ' ' || s[p.pos] == '\t' || s[p.pos] == '\n' || s[p.pos] == '\r') {
		p.pos++
	}
	start := p.pos
	if p.pos >= len(s) {
		p.tok = token{kind: tkEOF, pos: start}
		return
	}
	for _, sym := range symbols {
		if strings.HasPrefix(s[p.pos:], sym.text) {
			p.pos += len(sym.text)
			p.tok = token{sym.kind, sym.text, start}
			return
		}
	}
	c := s[p.pos]
	switch {
	case c == '"':
		var b strings.Builder
		p.pos++
		for p.pos < len(s) && s[p.pos] != '"' {
			if s[p.pos] == '\\' && p.pos+1 < len(s) {
				p.pos++
				switch s[p.pos] {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				case 'x':
					if p.pos+2 < len(s) {
						if v, err := strconv.ParseUint(s[p.pos+1:p.pos+3], 16, 8); err == nil {
							b.WriteByte(byte(v))
							p.pos += 2
							break
						}
					}
					b.WriteByte('x')
				default:
					b.WriteByte(s[p.pos])
				}
				p.pos++
				continue
			}
			b.WriteByte(s[p.pos])
			p.pos++
		}
		if p.pos >= len(s) {
			p.tok = token{tkBad, "unterminated string", start}
			return
		}
		p.pos++
		p.tok = token{tkString, b.String(), start}
	case isWordByte(c):
		// ".." ends a word: 4791..5000 is a range of two numbers.
		for p.pos < len(s) && isWordByte(s[p.pos]) && !strings.HasPrefix(s[p.pos:], "..") {
			p.pos++
		}
		w := s[start:p.pos]
		switch strings.ToLower(w) {
		case "and":
			p.tok = token{tkAnd, w, start}
		case "or":
			p.tok = token{tkOr, w, start}
		case "not":
			p.tok = token{tkNot, w, start}
		case "in":
			p.tok = token{tkIn, w, start}
		case "eq", "ne", "lt", "le", "gt", "ge", "contains", "any_eq", "all_ne", "any_ne", "all_eq":
			p.tok = token{tkOp, strings.ToLower(w), start}
		default:
			p.tok = token{tkWord, w, start}
		}
	default:
		p.tok = token{tkBad, fmt.Sprintf("unexpected character %q", c), start}
	}
}

// --- parser ---

func (p *parser) parseOr() (node, error) {
	return p.parseChain(tkOr, p.parseAnd, func(a, b node) node { return orNode{a, b} })
}

func (p *parser) parseAnd() (node, error) {
	return p.parseChain(tkAnd, p.parseNot, func(a, b node) node { return andNode{a, b} })
}

// parseChain parses operands joined by the operator op, grouped from the
// left: a op b op c is join(join(a, b), c).
func (p *parser) parseChain(op tokKind, operand func() (node, error), join func(a, b node) node) (node, error) {
	a, err := operand()
	if err != nil {
		return nil, err
	}
	for p.tok.kind == op {
		p.next()
		b, err := operand()
		if err != nil {
			return nil, err
		}
		a = join(a, b)
	}
	return a, nil
}

func (p *parser) parseNot() (node, error) {
	if p.tok.kind == tkNot {
		p.next()
		a, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		return notNode{a}, nil
	}
	return p.parsePrimary()
}

func (p *parser) parsePrimary() (node, error) {
	t := p.tok
	switch t.kind {
	case tkLParen:
		p.next()
		n, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		if p.tok.kind != tkRParen {
			return nil, p.errf(p.tok.pos, "expected \")\" to close the \"(\" at column %d", t.pos+1)
		}
		p.next()
		return n, nil
	case tkWord:
	case tkEOF:
		return nil, p.errf(t.pos, "expected a field name, a protocol or \"(\"")
	case tkBad:
		return nil, p.errf(t.pos, "%s", t.text)
	default:
		return nil, p.errf(t.pos, "expected a field name, a protocol or \"(\", got %q", t.text)
	}
	name := t.text
	p.next()
	f, isField := field.Lookup(name)
	proto, isProto := field.LookupProto(name)
	if !isField && !isProto {
		return nil, p.errf(t.pos, "%q is neither a field nor a protocol (cmpd-dissect fields lists them)", name)
	}
	// "not in": the "not" belongs to the comparison only when "in"
	// follows it.
	notIn := false
	if p.tok.kind == tkNot && p.tok.text != "!" {
		save, savePos := p.tok, p.pos
		p.next()
		if p.tok.kind == tkIn {
			notIn = true
		} else {
			p.tok, p.pos = save, savePos
		}
	}
	if p.tok.kind != tkOp && p.tok.kind != tkIn {
		if isField {
			return presenceNode{slot: p.col.Want(f)}, nil
		}
		if !dissect.IsTransport(proto) {
			// Its fields may be reported inside other layers.
			for _, pf := range proto.Fields {
				p.col.Want(pf)
			}
		}
		return protoNode{p: proto}, nil
	}
	opTok := p.tok
	p.next()
	if !isField {
		return nil, p.errf(opTok.pos, "%q is a protocol: it can only be tested for presence", name)
	}
	if opTok.kind == tkIn {
		n, err := p.parseSet(f, opTok)
		if err != nil {
			return nil, err
		}
		if notIn {
			return notNode{n}, nil
		}
		return n, nil
	}
	rel := opNames[opTok.text]
	lit, err := p.value(opTok)
	if err != nil {
		return nil, err
	}
	n := &cmpNode{fld: f, slot: p.col.Want(f), op: rel.op, neg: rel.neg, all: rel.all}
	if err := p.literal(n, lit, opTok); err != nil {
		return nil, err
	}
	return n, nil
}

// value reads the literal after an operator.
func (p *parser) value(after token) (token, error) {
	lit := p.tok
	if lit.kind != tkWord && lit.kind != tkString {
		if lit.kind == tkBad {
			return lit, p.errf(lit.pos, "%s", lit.text)
		}
		return lit, p.errf(lit.pos, "expected a value after %q", after.text)
	}
	p.next()
	return lit, nil
}

// parseSet reads "{ elem [,] elem … }" after "in".
func (p *parser) parseSet(f *field.Field, in token) (node, error) {
	if f.Kind == field.KindGroup {
		return nil, p.errf(in.pos, "%s is a subtree: it can only be tested for presence", f.Name)
	}
	if p.tok.kind != tkLBrace {
		return nil, p.errf(p.tok.pos, "expected \"{\" after \"in\"")
	}
	open := p.tok
	p.next()
	n := &cmpNode{fld: f, slot: p.col.Want(f), op: opIn}
	for {
		if p.tok.kind == tkRBrace {
			if len(n.set) == 0 {
				return nil, p.errf(p.tok.pos, "empty set")
			}
			p.next()
			return n, nil
		}
		if len(n.set) > 0 && p.tok.kind == tkComma {
			p.next()
		}
		if p.tok.kind == tkEOF {
			return nil, p.errf(p.tok.pos, "expected \"}\" to close the \"{\" at column %d", open.pos+1)
		}
		lo, err := p.value(open)
		if err != nil {
			return nil, err
		}
		e := setElem{lo: &cmpNode{fld: f, op: opEq}}
		if p.tok.kind == tkRange {
			rng := p.tok
			p.next()
			hi, err := p.value(rng)
			if err != nil {
				return nil, err
			}
			e.lo.op = opGe
			e.hi = &cmpNode{fld: f, op: opLe}
			if err := p.literal(e.hi, hi, rng); err != nil {
				return nil, err
			}
		}
		if err := p.literal(e.lo, lo, open); err != nil {
			return nil, err
		}
		n.set = append(n.set, e)
	}
}

// literal parses the value for the field's kind.
func (p *parser) literal(n *cmpNode, lit, opTok token) error {
	f := n.fld
	text := lit.text
	bad := func(want string) error {
		return p.errf(lit.pos, "%q is not %s (%s is %s)", text, want, f.Name, f.Kind)
	}
	if n.op == opContains && f.Kind != field.KindBytes && f.Kind != field.KindString {
		return p.errf(opTok.pos, "\"contains\" needs a bytes or string field; %s is %s", f.Name, f.Kind)
	}
	switch f.Kind {
	case field.KindGroup:
		return p.errf(opTok.pos, "%s is a subtree: it can only be tested for presence", f.Name)
	case field.KindUint, field.KindHex:
		if lit.kind == tkWord {
			if v, err := strconv.ParseUint(text, 0, 64); err == nil {
				n.u = v
				return nil
			}
		}
		for v, name := range f.Names {
			if strings.EqualFold(name, text) {
				n.u = v
				return nil
			}
		}
		if f.Names != nil {
			return p.errf(lit.pos, "%q is neither a number nor a value name of %s (%s)", text, f.Name, nameList(f.Names))
		}
		return bad("a number")
	case field.KindMAC, field.KindEUI64:
		want := 6
		if f.Kind == field.KindEUI64 {
			want = 8
		}
		bs, err := parseHexBytes(text)
		if err != nil || len(bs) != want {
			if v, err := strconv.ParseUint(text, 0, 64); err == nil && lit.kind == tkWord {
				n.u = v
				return nil
			}
			return bad(fmt.Sprintf("a %d-byte address (aa:bb:…)", want))
		}
		for _, c := range bs {
			n.u = n.u<<8 | uint64(c)
		}
	case field.KindInt:
		v, err := strconv.ParseInt(text, 0, 64)
		if err != nil {
			return bad("an integer")
		}
		n.i = v
	case field.KindBool:
		switch strings.ToLower(text) {
		case "1", "true":
			n.b = true
		case "0", "false":
			n.b = false
		default:
			return bad("true, false, 1 or 0")
		}
	case field.KindAddr:
		if strings.Contains(text, "/") {
			pr, err := netip.ParsePrefix(text)
			if err != nil {
				return bad("an address or prefix")
			}
			n.prefix = pr.Masked()
			pr = netip.PrefixFrom(pr.Addr().Unmap(), pr.Bits())
			if n.op != opEq {
				return p.errf(lit.pos, "a prefix only compares with ==, != or in (not in a range)")
			}
			n.prefix = pr.Masked()
			return nil
		}
		a, err := netip.ParseAddr(text)
		if err != nil {
			return bad("an IPv4/IPv6 address or GID")
		}
		a = a.Unmap()
		n.prefix = netip.PrefixFrom(a, a.BitLen())
	case field.KindString:
		n.s = text
		n.bs = []byte(text)
		if x, err := strconv.ParseFloat(text, 64); err == nil {
			n.num, n.isNum = x, true
		}
	case field.KindBytes:
		if lit.kind == tkString {
			n.bs = []byte(text)
			return nil
		}
		bs, err := parseHexBytes(text)
		if err != nil {
			return bad("bytes (aa:bb:cc, aa-bb-cc or aabbcc) or a quoted string")
		}
		n.bs = bs
	}
	return nil
}

func nameList(m map[uint64]string) string {
	names := make([]string, 0, len(m))
	for _, n := range m {
		names = append(names, n)
	}
	if len(names) > 8 {
		sort.Strings(names)
		return strings.Join(names[:8], ", ") + ", …"
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// parseHexBytes reads aa:bb:cc, aa-bb-cc, aa.bb.cc or aabbcc.
func parseHexBytes(s string) ([]byte, error) {
	if strings.ContainsAny(s, ":-.") {
		parts := strings.FieldsFunc(s, func(r rune) bool { return r == ':' || r == '-' || r == '.' })
		out := make([]byte, 0, len(parts))
		for _, part := range parts {
			if len(part) == 0 || len(part) > 2 {
				return nil, fmt.Errorf("bad byte %q", part)
			}
			v, err := strconv.ParseUint(part, 16, 8)
			if err != nil {
				return nil, err
			}
			out = append(out, byte(v))
		}
		return out, nil
	}
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	if len(s)%2 == 1 {
		s = "0" + s
	}
	return hex.DecodeString(s)
}
