// Package capfilter compiles capture filters — the pcap-filter(7)
// language of tcpdump and libpcap, as users type them after -f — to
// classic BPF programs, in pure Go, for the link types a capture of RDMA
// traffic comes in: Ethernet, Linux cooked (SLL and SLL2) and raw IP.
//
// The programs select what libpcap's select: each primitive expands to
// the tests libpcap's code generator makes (gencode.c), down to its
// quirks — "host" also matches ARP and RARP addresses, "port" matches
// TCP, UDP and SCTP over IPv4 and IPv6 but no IPv4 fragment after the
// first, "tcp" follows one IPv6 fragment header, "vlan" moves the offsets
// of everything to its right, "and" and "or" bind equally from the left,
// and a lone value repeats the qualifiers before it ("host a or b").
// The differential tests run tcpdump on the same captures and on every
// expression compare the frames passed.
//
// Instructions and the virtual machine that runs them in user space are
// golang.org/x/net/bpf's.
package capfilter

import (
	"fmt"
	"strings"

	"github.com/cmpd-dissect/cmpd-dissect/internal/exprerr"
	"golang.org/x/net/bpf"
)

// Link types a filter is compiled for (the pcap LINKTYPE_ values).
const (
	LinkTypeEthernet   = 1
	LinkTypeRaw        = 101 // raw IPv4 or IPv6, by the version nibble
	LinkTypeLinuxSLL   = 113
	LinkTypeERF        = 197
	LinkTypeIPv4       = 228
	LinkTypeIPv6       = 229
	LinkTypeInfiniBand = 247
	LinkTypeLinuxSLL2  = 276
)

// Accept is what a program returns for a packet it passes: the length
// to keep, libpcap's default snapshot length (the whole packet).
const Accept = 262144

// MaxInstructions is the longest program the Linux kernel attaches
// (BPF_MAXINSNS).
const MaxInstructions = 4096

// Error is an expression that is not understood or that does not apply
// to the link type (its Lang is "capture filter").
type Error = exprerr.Error

const lang = "capture filter"

// Filter is a compiled capture filter.
type Filter struct {
	// Expr is the expression it was compiled from.
	Expr string
	// LinkType is the link type of the frames it reads.
	LinkType int
	// Instructions is the program: it returns Accept for a frame that
	// passes, 0 for one that does not.
	Instructions []bpf.Instruction
	// VLAN is set when the expression tests 802.1Q/802.1ad tags. A Linux
	// packet socket's kernel filter does not see them in the packet (the
	// kernel strips them into metadata), so a live capture runs such a
	// filter itself on the frames with their tags put back.
	VLAN bool
}

// Compile compiles expr for frames of linkType. A blank expression gives
// a nil Filter: everything is captured.
func Compile(expr string, linkType int) (*Filter, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, nil
	}
	link, ok := links[linkType]
	if !ok {
		return nil, &Error{Lang: lang, Expr: expr, Pos: 0, Msg: fmt.Sprintf("capture filters are not supported for link type %s: pcap-filter's syntax applies to Ethernet, Linux cooked and raw IP frames", LinkTypeName(linkType))}
	}
	toks, err := lex(expr)
	if err != nil {
		return nil, err
	}
	p := &parser{expr: expr, toks: toks, link: link, offLinkType: link.offLinkType, offLinkPL: link.offLinkPL}
	root, err := p.parse()
	if err != nil {
		return nil, err
	}
	root = fold(root)
	if c, ok := root.(nConst); ok && !bool(c) {
		return nil, &Error{Lang: lang, Expr: expr, Pos: 0, Msg: fmt.Sprintf("expression rejects all packets (on link type %s)", link.name)}
	}
	ins, err := generate(expr, root)
	if err != nil {
		return nil, err
	}
	return &Filter{Expr: expr, LinkType: linkType, Instructions: ins, VLAN: p.vlanDepth > 0}, nil
}

// Assemble gives the program as the kernel takes it.
func (f *Filter) Assemble() ([]bpf.RawInstruction, error) {
	raw, err := bpf.Assemble(f.Instructions)
	if err != nil {
		return nil, fmt.Errorf("capture filter %q: %w", f.Expr, err)
	}
	return raw, nil
}

// Matcher runs the filter in user space.
type Matcher struct{ vm *bpf.VM }

// NewMatcher prepares f to run on frames.
func (f *Filter) NewMatcher() (*Matcher, error) {
	vm, err := bpf.NewVM(f.Instructions)
	if err != nil {
		return nil, fmt.Errorf("capture filter %q: %w", f.Expr, err)
	}
	return &Matcher{vm: vm}, nil
}

// Match reports whether the frame (its link-layer header first) passes.
// A load past the end of the frame rejects it, as in the kernel.
func (m *Matcher) Match(frame []byte) bool {
	n, err := m.vm.Run(frame)
	return err == nil && n > 0
}

// link is what the code generator needs of a link type: where its
// protocol type field and its payload are, and what it is.
type link struct {
	name        string
	kind        linkKind
	offLinkType int // offset of the EtherType-like field (-1: none)
	offLinkPL   int // offset of the network-layer header
}

type linkKind int

const (
	kindEthernet linkKind = iota
	kindSLL
	kindSLL2
	kindRaw  // version nibble tells IPv4 from IPv6
	kindIPv4 // every packet is IPv4
	kindIPv6 // every packet is IPv6
)

var links = map[int]link{
	LinkTypeEthernet:  {"ETHERNET", kindEthernet, 12, 14},
	LinkTypeLinuxSLL:  {"LINUX_SLL", kindSLL, 14, 16},
	LinkTypeLinuxSLL2: {"LINUX_SLL2", kindSLL2, 0, 20},
	LinkTypeRaw:       {"RAW", kindRaw, -1, 0},
	LinkTypeIPv4:      {"IPV4", kindIPv4, -1, 0},
	LinkTypeIPv6:      {"IPV6", kindIPv6, -1, 0},
}

// LinkTypeName names a link type as the pcap LINKTYPE_ list does, with
// its number.
func LinkTypeName(lt int) string {
	names := map[int]string{LinkTypeERF: "ERF", LinkTypeInfiniBand: "INFINIBAND"}
	if l, ok := links[lt]; ok {
		return fmt.Sprintf("%s (%d)", l.name, lt)
	}
	if n, ok := names[lt]; ok {
		return fmt.Sprintf("%s (%d)", n, lt)
	}
	return fmt.Sprintf("%d", lt)
}
