// Package field is the project's single vocabulary for protocol fields.
//
// Every protocol layer declares each of its fields exactly once, as a *Field
// value registered under a Proto (Wireshark's hf_ tables, done the Go way).
// A decoded layer reports its values, in order, to a Visitor. The tree view,
// JSON, "-T fields", "-Y" display filters and "cmpd-dissect fields" are all
// Visitors or readers of the registry: no view knows a protocol and no
// protocol knows a view.
//
// The package imports nothing of this project and nothing outside the
// standard library, so every layer package (and pvtdata) can depend on it.
package field

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"sync"

	"github.com/cmpd-dissect/cmpd-dissect/internal/enum"
)

// Kind says how a field's value is carried and displayed.
type Kind uint8

const (
	// KindUint is an unsigned integer shown in decimal. Visitor.Uint.
	KindUint Kind = iota + 1
	// KindHex is an unsigned integer shown in hexadecimal, zero-padded to
	// Bits/4 digits. Visitor.Uint.
	KindHex
	// KindInt is a signed integer. Visitor.Int.
	KindInt
	// KindBool is a flag. Visitor.Bool.
	KindBool
	// KindString is text taken from the packet or derived from it. Views
	// escape it before printing. Visitor.String.
	KindString
	// KindBytes is an opaque byte string shown in hex. Visitor.Bytes.
	KindBytes
	// KindAddr is an IPv4 or IPv6 address or an InfiniBand GID. Visitor.Addr.
	KindAddr
	// KindMAC is a 48-bit Ethernet address carried in the low bits of a
	// uint64. Visitor.Uint.
	KindMAC
	// KindEUI64 is a 64-bit GUID (node, port or CA GUID). Visitor.Uint.
	KindEUI64
	// KindGroup is a subtree with no value of its own: Visitor.Begin opens
	// it and Visitor.End closes it.
	KindGroup
)

var kindNames = [...]string{
	KindUint: "uint", KindHex: "hex", KindInt: "int", KindBool: "bool",
	KindString: "string", KindBytes: "bytes", KindAddr: "addr",
	KindMAC: "mac", KindEUI64: "eui64", KindGroup: "group",
}

func (k Kind) String() string { return enum.Name("Kind", kindNames[:], k) }

// Field is the one declaration of a protocol field.
type Field struct {
	// Name is the dotted filter name, unique across the program, lower case,
	// beginning with its protocol's name: "cm.req.local_comm_id".
	Name string
	// Kind is the value's representation.
	Kind Kind
	// Bits is the width on the wire for integers (display padding for
	// KindHex); 0 when not meaningful.
	Bits int
	// Desc is the human label used by the tree view ("Local Communication ID").
	Desc string
	// Unit is appended to displayed values ("bytes", "µs"); may be empty.
	Unit string
	// Ref names the specification that defines the field ("RFC 8797 §4").
	Ref string
	// Names gives names to enumerated values; nil for plain numbers.
	Names map[uint64]string
	// Proto is the protocol that declared the field.
	Proto *Proto
	// ID numbers the declared fields from 1 in declaration order, so hot
	// paths can index a slice by field instead of a map; 0 for a Field not
	// made by Declare.
	ID int
	// Aliases are tshark's names for this field (ip.src for ipv4.src),
	// from the one table in tshark.go.
	Aliases []string
	// Members are the two fields of an "either side" field (ipv4.src
	// and ipv4.dst for ipv4.addr): layers never report it, a value of
	// either member is its value. Nil for other fields.
	Members []*Field
	// Either is the either-side field this field is a member of, if any.
	Either *Field
}

// ValueName returns the declared name of an enumerated value.
func (f *Field) ValueName(v uint64) (string, bool) {
	if f.Names == nil {
		return "", false
	}
	s, ok := f.Names[v]
	return s, ok
}

// WithNames attaches value names to an enumerated field and returns it.
func (f *Field) WithNames(names map[uint64]string) *Field { f.Names = names; return f }

// WithUnit sets the display unit and returns the field.
func (f *Field) WithUnit(unit string) *Field { f.Unit = unit; return f }

// WithRef sets the specification reference and returns the field.
func (f *Field) WithRef(ref string) *Field { f.Ref = ref; return f }

// Proto is a protocol (one layer name) and the fields it declares, in
// declaration order.
type Proto struct {
	// Name is the lower-case layer name used in JSON and filters: "bth".
	Name string
	// Desc is the long name: "InfiniBand Base Transport Header".
	Desc string
	// Fields lists every field declared under this protocol.
	Fields []*Field
}

var (
	regMu  sync.RWMutex
	protos = map[string]*Proto{}
	fields = map[string]*Field{}
)

// NewProto declares and registers a protocol. Declaring the same name twice
// is a programming error and panics at init time.
func NewProto(name, desc string) *Proto {
	regMu.Lock()
	defer regMu.Unlock()
	if name == "" || strings.ToLower(name) != name {
		panic("field: protocol name must be non-empty lower case: " + name)
	}
	if _, dup := protos[name]; dup {
		panic("field: protocol declared twice: " + name)
	}
	p := &Proto{Name: name, Desc: desc}
	protos[name] = p
	return p
}

// Declare adds a field to the protocol and the global registry. The name
// must start with the protocol name and a dot (or equal it) and be unique;
// violations panic at init time, so a test that imports the package catches
// them.
func (p *Proto) Declare(name string, kind Kind, bits int, desc string) *Field {
	regMu.Lock()
	defer regMu.Unlock()
	if name != p.Name && !strings.HasPrefix(name, p.Name+".") {
		panic(fmt.Sprintf("field: %q is not under protocol %q", name, p.Name))
	}
	if _, dup := fields[name]; dup {
		panic("field: declared twice: " + name)
	}
	f := &Field{Name: name, Kind: kind, Bits: bits, Desc: desc, Proto: p, ID: len(fields) + 1}
	p.Fields = append(p.Fields, f)
	fields[name] = f
	return f
}

// Uint declares a decimal unsigned integer field.
func (p *Proto) Uint(name string, bits int, desc string) *Field {
	return p.Declare(name, KindUint, bits, desc)
}

// Hex declares an unsigned integer field displayed in hexadecimal.
func (p *Proto) Hex(name string, bits int, desc string) *Field {
	return p.Declare(name, KindHex, bits, desc)
}

// Int declares a signed integer field.
func (p *Proto) Int(name string, bits int, desc string) *Field {
	return p.Declare(name, KindInt, bits, desc)
}

// Bool declares a flag.
func (p *Proto) Bool(name, desc string) *Field { return p.Declare(name, KindBool, 1, desc) }

// String declares a text field.
func (p *Proto) String(name, desc string) *Field { return p.Declare(name, KindString, 0, desc) }

// Bytes declares an opaque byte-string field.
func (p *Proto) Bytes(name, desc string) *Field { return p.Declare(name, KindBytes, 0, desc) }

// Addr declares an IP address or GID field.
func (p *Proto) Addr(name, desc string) *Field { return p.Declare(name, KindAddr, 128, desc) }

// MAC declares a 48-bit Ethernet address field.
func (p *Proto) MAC(name, desc string) *Field { return p.Declare(name, KindMAC, 48, desc) }

// EUI64 declares a 64-bit GUID field.
func (p *Proto) EUI64(name, desc string) *Field { return p.Declare(name, KindEUI64, 64, desc) }

// Group declares a subtree.
func (p *Proto) Group(name, desc string) *Field { return p.Declare(name, KindGroup, 0, desc) }

// Lookup returns the field declared under name, or the field that name
// is tshark's alias of (ip.src: ipv4.src).
func Lookup(name string) (*Field, bool) {
	resolveDerived()
	regMu.RLock()
	defer regMu.RUnlock()
	f, ok := fields[name]
	if !ok {
		f, ok = aliases[name]
	}
	return f, ok
}

// LookupProto returns the protocol registered under name, or the one
// name is tshark's name of (ip: ipv4).
func LookupProto(name string) (*Proto, bool) {
	regMu.RLock()
	defer regMu.RUnlock()
	p, ok := protos[name]
	if !ok && tsharkProtos[name] != "" {
		p, ok = protos[tsharkProtos[name]]
	}
	return p, ok
}

// Protos returns every registered protocol sorted by name.
func Protos() []*Proto {
	resolveDerived()
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]*Proto, 0, len(protos))
	for _, p := range protos {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Visitor receives a layer's fields in wire order. Implementations must not
// retain the []byte or string arguments past the call unless they copy them:
// they alias packet buffers that are reused.
type Visitor interface {
	Uint(f *Field, v uint64) // KindUint, KindHex, KindMAC, KindEUI64
	Int(f *Field, v int64)
	Bool(f *Field, v bool)
	String(f *Field, v string)
	Bytes(f *Field, v []byte)
	Addr(f *Field, v netip.Addr)
	// Begin opens a subtree under f (a KindGroup field); End closes the
	// innermost open subtree. Calls nest.
	Begin(f *Field)
	End()
}

// NopVisitor is a Visitor that ignores every call. A visitor that looks at
// some kinds of field only embeds it and implements those.
type NopVisitor struct{}

func (NopVisitor) Uint(*Field, uint64)     {}
func (NopVisitor) Int(*Field, int64)       {}
func (NopVisitor) Bool(*Field, bool)       {}
func (NopVisitor) String(*Field, string)   {}
func (NopVisitor) Bytes(*Field, []byte)    {}
func (NopVisitor) Addr(*Field, netip.Addr) {}
func (NopVisitor) Begin(*Field)            {}
func (NopVisitor) End()                    {}

// Layer is a decoded protocol layer that can report its fields. Every layer
// type of this project implements it; dissect wraps gopacket's own layers
// (Ethernet, IPv4, …) in adapters that do too.
type Layer interface {
	// Proto returns the protocol declaration (its Name is the layer name
	// in JSON, filters and summaries), the same for every value of a
	// layer type (stats finds a layer's protocol by its type).
	Proto() *Proto
	// VisitFields reports every field value in wire order.
	VisitFields(v Visitor)
}

// UintGetter is implemented by layers that can give some of their integer
// fields' values without a visit of every field: stats' breakdown (a field
// or two counted on every packet) then costs a call instead of a visit. For
// a field it answers for (known), GetUint agrees with VisitFields: has is
// true exactly when VisitFields reports f at top level (outside Begin/End)
// with Uint, and v is the value it reports there (VisitFields reports f
// once at most, and never inside a group). For any other field known
// is false and the caller visits. view's TestUintGetterAgrees checks the
// agreement on every layer of every capture.
type UintGetter interface {
	GetUint(f *Field) (v uint64, has, known bool)
}

// GetOne is GetUint for a layer that answers for one field, its: asked for
// its, it has v.
func GetOne(f, its *Field, v uint64) (_ uint64, has, known bool) {
	if f == its {
		return v, true, true
	}
	return 0, false, false
}

// Summarizer is implemented by layers that contribute to the one-line packet
// summary (tshark's Info column): "CM REQ svc=NFS/RDMA(20049) qpn=0x12 …".
// AppendSummary appends plain text (no trailing space) to b; the summary view
// joins the contributions of a frame's layers with two spaces. Layers that
// are only transport (Ethernet, UDP) need not implement it.
type Summarizer interface {
	AppendSummary(b []byte) []byte
}
