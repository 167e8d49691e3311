package capfilter

import (
	"fmt"

	"golang.org/x/net/bpf"
)

// The expression tree: boolean nodes over comparisons of arithmetic.
type node interface{}

type (
	nAnd   struct{ a, b node }
	nOr    struct{ a, b node }
	nNot   struct{ a node }
	nConst bool
	// nRel compares l with r: jump if l cond r.
	nRel struct {
		l, r arith
		cond bpf.JumpTest
	}
)

func rel(l, r arith, cond bpf.JumpTest) node { return nRel{l: l, r: r, cond: cond} }

// join is "a and b" (and) or "a or b".
func join(and bool, a, b node) node {
	if and {
		return nAnd{a, b}
	}
	return nOr{a, b}
}

// Arithmetic: 32-bit unsigned values, as BPF's.
type arith interface{}

type (
	aConst uint32
	aLen   struct{}
	// aLoad reads size octets at base+idx; transport: base is also
	// past the IPv4 header, whose length is read at base.
	aLoad struct {
		base      int
		transport bool
		idx       arith
		size      int
	}
	aBin struct {
		op   bpf.ALUOp
		l, r arith
		pos  int
	}
	aNeg struct{ a arith }
)

func loadAbs(off, size int) arith { return aLoad{base: off, idx: aConst(0), size: size} }

func mask(a arith, m uint32) arith { return aBin{op: bpf.ALUOpAnd, l: a, r: aConst(m)} }

// fold replaces the tests whose outcome the link type decides ("ip" on
// raw IPv4 frames) by their value, as libpcap's optimizer does.
func fold(n node) node {
	switch n := n.(type) {
	case nAnd:
		a, b := fold(n.a), fold(n.b)
		ca, aok := a.(nConst)
		cb, bok := b.(nConst)
		switch {
		case aok && !bool(ca), bok && !bool(cb):
			return nConst(false)
		case aok:
			return b
		case bok:
			return a
		}
		return nAnd{a, b}
	case nOr:
		a, b := fold(n.a), fold(n.b)
		ca, aok := a.(nConst)
		cb, bok := b.(nConst)
		switch {
		case aok && bool(ca), bok && bool(cb):
			return nConst(true)
		case aok:
			return b
		case bok:
			return a
		}
		return nOr{a, b}
	case nNot:
		a := fold(n.a)
		if c, ok := a.(nConst); ok {
			return nConst(!bool(c))
		}
		return nNot{a}
	}
	return n
}

// A label is a place in the program that jumps go to.
type label int

// item is one element of the program before jumps are resolved: an
// instruction, a conditional jump to labels, an unconditional jump to a
// label, or a label's place.
type item struct {
	ins   bpf.Instruction
	cond  bool
	test  bpf.JumpTest
	val   uint32
	useX  bool
	t, f  label
	jump  bool
	to    label
	place bool
	at    label
}

type generator struct {
	expr    string
	items   []item
	labels  int
	scratch int
}

func (g *generator) newLabel() label { g.labels++; return label(g.labels) }
func (g *generator) emit(ins bpf.Instruction) {
	g.items = append(g.items, item{ins: ins})
}
func (g *generator) placeLabel(l label) { g.items = append(g.items, item{place: true, at: l}) }

// generate compiles the tree: short-circuit jumps to an accepting and a
// rejecting return.
func generate(expr string, root node) ([]bpf.Instruction, error) {
	g := &generator{expr: expr}
	acc, rej := g.newLabel(), g.newLabel()
	if err := g.gen(root, acc, rej); err != nil {
		return nil, err
	}
	g.placeLabel(acc)
	g.emit(bpf.RetConstant{Val: Accept})
	g.placeLabel(rej)
	g.emit(bpf.RetConstant{Val: 0})
	ins := g.resolve()
	if len(ins) > MaxInstructions {
		return nil, &Error{Lang: lang, Expr: expr, Pos: 0, Msg: fmt.Sprintf("the program is too long (%d instructions; the kernel takes at most %d)", len(ins), MaxInstructions)}
	}
	return ins, nil
}

// then generates "a and b" (and) or "a or b": a is tested first; where
// its outcome does not settle the answer (true for "and", false for "or")
// b is tested next.
func (g *generator) then(and bool, a, b node, t, f label) error {
	mid := g.newLabel()
	at, af := t, mid
	if and {
		at, af = mid, f
	}
	if err := g.gen(a, at, af); err != nil {
		return err
	}
	g.placeLabel(mid)
	return g.gen(b, t, f)
}

func (g *generator) gen(n node, t, f label) error {
	switch n := n.(type) {
	case nAnd:
		return g.then(true, n.a, n.b, t, f)
	case nOr:
		return g.then(false, n.a, n.b, t, f)
	case nNot:
		return g.gen(n.a, f, t)
	case nConst:
		to := f
		if n {
			to = t
		}
		g.items = append(g.items, item{jump: true, to: to})
		return nil
	case nRel:
		if err := g.arith(n.l); err != nil {
			return err
		}
		if c, ok := n.r.(aConst); ok {
			g.items = append(g.items, item{cond: true, test: n.cond, val: uint32(c), t: t, f: f})
			return nil
		}
		if err := g.toX(n.r, 0); err != nil {
			return err
		}
		g.items = append(g.items, item{cond: true, test: n.cond, useX: true, t: t, f: f})
		return nil
	}
	return fmt.Errorf("capfilter: unknown node %T", n)
}

// toX evaluates r into X keeping A: A is saved in scratch memory while r
// is computed.
func (g *generator) toX(r arith, pos int) error {
	if g.scratch >= 16 {
		return &Error{Lang: lang, Expr: g.expr, Pos: pos, Msg: "the expression is too deeply nested (BPF has 16 scratch cells)"}
	}
	slot := g.scratch
	g.scratch++
	g.emit(bpf.StoreScratch{Src: bpf.RegA, N: slot})
	if err := g.arith(r); err != nil {
		return err
	}
	g.emit(bpf.TAX{})
	g.emit(bpf.LoadScratch{Dst: bpf.RegA, N: slot})
	g.scratch--
	return nil
}

// arith leaves the value of a in A (X and scratch cells above the ones
// in use may change).
func (g *generator) arith(a arith) error {
	switch a := a.(type) {
	case aConst:
		g.emit(bpf.LoadConstant{Dst: bpf.RegA, Val: uint32(a)})
	case aLen:
		g.emit(bpf.LoadExtension{Num: bpf.ExtLen})
	case aNeg:
		if err := g.arith(a.a); err != nil {
			return err
		}
		g.emit(bpf.NegateA{})
	case aBin:
		if err := g.arith(a.l); err != nil {
			return err
		}
		if c, ok := a.r.(aConst); ok {
			g.emit(bpf.ALUOpConstant{Op: a.op, Val: uint32(c)})
			return nil
		}
		if err := g.toX(a.r, a.pos); err != nil {
			return err
		}
		g.emit(bpf.ALUOpX{Op: a.op})
	case aLoad:
		c, constIdx := a.idx.(aConst)
		switch {
		case constIdx && !a.transport:
			g.emit(bpf.LoadAbsolute{Off: uint32(a.base) + uint32(c), Size: a.size})
		case constIdx:
			g.emit(bpf.LoadMemShift{Off: uint32(a.base)})
			g.emit(bpf.LoadIndirect{Off: uint32(a.base) + uint32(c), Size: a.size})
		default:
			if err := g.arith(a.idx); err != nil {
				return err
			}
			if a.transport {
				g.emit(bpf.LoadMemShift{Off: uint32(a.base)})
				g.emit(bpf.ALUOpX{Op: bpf.ALUOpAdd})
			}
			g.emit(bpf.TAX{})
			g.emit(bpf.LoadIndirect{Off: uint32(a.base), Size: a.size})
		}
	default:
		return fmt.Errorf("capfilter: unknown arithmetic %T", a)
	}
	return nil
}

// positions returns where each label placed in items is (the index of
// the instruction after it) and the number of instructions.
func positions(items []item) (pos map[label]int, n int) {
	pos = map[label]int{}
	for _, it := range items {
		if it.place {
			pos[it.at] = n
		} else {
			n++
		}
	}
	return pos, n
}

// resolve turns labels into relative jumps. A conditional jump reaches
// at most 255 instructions ahead: a farther target gets an unconditional
// jump (32-bit offset) inserted after it.
func (g *generator) resolve() []bpf.Instruction {
	items := g.dropJumpsToNext(g.items)
	for {
		pos, _ := positions(items)
		fixed := false
		var out []item
		n := 0
		for _, it := range items {
			if it.place {
				out = append(out, it)
				continue
			}
			if it.cond {
				var extra []item
				if pos[it.t]-(n+1) > 255 {
					l := g.newLabel()
					extra = append(extra, item{place: true, at: l}, item{jump: true, to: it.t})
					it.t = l
				}
				if pos[it.f]-(n+1) > 255 {
					l := g.newLabel()
					extra = append(extra, item{place: true, at: l}, item{jump: true, to: it.f})
					it.f = l
				}
				if len(extra) > 0 {
					// the jumps are placed after this one; the
					// rest of this pass is recomputed next time
					out = append(out, it)
					out = append(out, extra...)
					fixed = true
					n++
					continue
				}
			}
			out = append(out, it)
			n++
		}
		items = out
		if !fixed {
			break
		}
	}
	pos, n := positions(items)
	ins := make([]bpf.Instruction, 0, n)
	for _, it := range items {
		i := len(ins)
		switch {
		case it.place:
			continue
		case it.jump:
			ins = append(ins, bpf.Jump{Skip: uint32(pos[it.to] - (i + 1))})
		case it.cond && it.useX:
			ins = append(ins, bpf.JumpIfX{Cond: it.test, SkipTrue: uint8(pos[it.t] - (i + 1)), SkipFalse: uint8(pos[it.f] - (i + 1))})
		case it.cond:
			ins = append(ins, bpf.JumpIf{Cond: it.test, Val: it.val, SkipTrue: uint8(pos[it.t] - (i + 1)), SkipFalse: uint8(pos[it.f] - (i + 1))})
		default:
			ins = append(ins, it.ins)
		}
	}
	return ins
}

// dropJumpsToNext removes unconditional jumps to the place right after
// them (from constant tests such as "ip" on raw IPv4).
func (g *generator) dropJumpsToNext(items []item) []item {
	var out []item
	for i, it := range items {
		if it.jump {
			next := false
			for _, later := range items[i+1:] {
				if !later.place {
					break
				}
				if later.at == it.to {
					next = true
					break
				}
			}
			if next {
				continue
			}
		}
		out = append(out, it)
	}
	return out
}
