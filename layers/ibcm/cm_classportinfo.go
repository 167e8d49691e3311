package ibcm

import (
	"sync"

	"github.com/cmpd-dissect/cmpd-dissect/field"
)

const classPortInfoLen = 72

// ClassPortInfo is the class's port information (IBTA vol. 1 §13.4.8.1
// table 126; Linux struct ib_class_port_info): 72 octets. CM sends it as
// the GetResp to a Get(ClassPortInfo), and inside REJ (reasons 24, 25),
// SIDR_REP (status 4) and APR (status 4) to redirect.
type ClassPortInfo struct {
	BaseVersion      uint8
	ClassVersion     uint8
	CapabilityMask   uint16
	CapabilityMask2  uint32 // 27 bits
	RespTimeValue    uint8  // 5 bits
	RedirectGID      [16]byte
	RedirectTC       uint8
	RedirectSL       uint8
	RedirectFL       uint32
	RedirectLID      uint16
	RedirectPKey     uint16
	RedirectReserved uint8
	RedirectQP       uint32
	RedirectQKey     uint32
	TrapGID          [16]byte
	TrapTC           uint8
	TrapSL           uint8
	TrapFL           uint32
	TrapLID          uint16
	TrapPKey         uint16
	TrapHL           uint8
	TrapQP           uint32
	TrapQKey         uint32
}

// classPortInfoFields is the layout of a ClassPortInfo whose fields are
// named under a prefix (cm.cpi, or the redirect in a REJ, SIDR_REP or APR).
type classPortInfoFields struct{ wire[ClassPortInfo] }

func newClassPortInfoFields(p string) classPortInfoFields {
	self := func(c *ClassPortInfo) *ClassPortInfo { return c }
	return classPortInfoFields{part(ProtoCM.Group(p, "ClassPortInfo"), self, 0, wires[ClassPortInfo]{
		num(ProtoCM.Uint(p+".baseversion", 8, "Base Version"), func(c *ClassPortInfo) *uint8 { return &c.BaseVersion }, at(0, 0)),
		num(ProtoCM.Uint(p+".classversion", 8, "Class Version"), func(c *ClassPortInfo) *uint8 { return &c.ClassVersion }, at(1, 0)),
		num(ProtoCM.Hex(p+".capabilitymask", 16, "Capability Mask"), func(c *ClassPortInfo) *uint16 { return &c.CapabilityMask }, at(2, 0)),
		num(ProtoCM.Hex(p+".capabilitymask2", 27, "Capability Mask 2"), func(c *ClassPortInfo) *uint32 { return &c.CapabilityMask2 }, at(4, 0)),
		num(ProtoCM.Uint(p+".resptimevalue", 5, "Response Time Value (4.096 µs · 2^n)"), func(c *ClassPortInfo) *uint8 { return &c.RespTimeValue }, at(7, 3)),
		gid(ProtoCM.Addr(p+".redirectgid", "Redirect GID"), func(c *ClassPortInfo) *[16]byte { return &c.RedirectGID }, 8),
		num(ProtoCM.Hex(p+".redirecttc", 8, "Redirect Traffic Class"), func(c *ClassPortInfo) *uint8 { return &c.RedirectTC }, at(24, 0)),
		num(ProtoCM.Uint(p+".redirectsl", 4, "Redirect SL"), func(c *ClassPortInfo) *uint8 { return &c.RedirectSL }, at(25, 0)),
		num(ProtoCM.Hex(p+".redirectfl", 20, "Redirect Flow Label"), func(c *ClassPortInfo) *uint32 { return &c.RedirectFL }, at(25, 4)),
		num(ProtoCM.Uint(p+".redirectlid", 16, "Redirect LID"), func(c *ClassPortInfo) *uint16 { return &c.RedirectLID }, at(28, 0)),
		num(ProtoCM.Hex(p+".redirectpkey", 16, "Redirect P_Key"), func(c *ClassPortInfo) *uint16 { return &c.RedirectPKey }, at(30, 0)),
		reserved(num(nil, func(c *ClassPortInfo) *uint8 { return &c.RedirectReserved }, piece(32, 0, 8))),
		num(ProtoCM.Hex(p+".redirectqp", 24, "Redirect QP"), func(c *ClassPortInfo) *uint32 { return &c.RedirectQP }, at(33, 0)),
		num(ProtoCM.Hex(p+".redirectqkey", 32, "Redirect Q_Key"), func(c *ClassPortInfo) *uint32 { return &c.RedirectQKey }, at(36, 0)),
		gid(ProtoCM.Addr(p+".trapgid", "Trap GID"), func(c *ClassPortInfo) *[16]byte { return &c.TrapGID }, 40),
		num(ProtoCM.Hex(p+".traptc", 8, "Trap Traffic Class"), func(c *ClassPortInfo) *uint8 { return &c.TrapTC }, at(56, 0)),
		num(ProtoCM.Uint(p+".trapsl", 4, "Trap SL"), func(c *ClassPortInfo) *uint8 { return &c.TrapSL }, at(57, 0)),
		num(ProtoCM.Hex(p+".trapfl", 20, "Trap Flow Label"), func(c *ClassPortInfo) *uint32 { return &c.TrapFL }, at(57, 4)),
		num(ProtoCM.Uint(p+".traplid", 16, "Trap LID"), func(c *ClassPortInfo) *uint16 { return &c.TrapLID }, at(60, 0)),
		num(ProtoCM.Hex(p+".trappkey", 16, "Trap P_Key"), func(c *ClassPortInfo) *uint16 { return &c.TrapPKey }, at(62, 0)),
		num(ProtoCM.Uint(p+".traphl", 8, "Trap Hop Limit"), func(c *ClassPortInfo) *uint8 { return &c.TrapHL }, at(64, 0)),
		num(ProtoCM.Hex(p+".trapqp", 24, "Trap QP"), func(c *ClassPortInfo) *uint32 { return &c.TrapQP }, at(65, 0)),
		num(ProtoCM.Hex(p+".trapqkey", 32, "Trap Q_Key"), func(c *ClassPortInfo) *uint32 { return &c.TrapQKey }, at(68, 0)),
	})}
}

var cpiLayout = newLayout(AttrClassPortInfo, func(c *CM) *ClassPortInfo { return &c.ClassPortInfo },
	newClassPortInfoFields("cm.cpi").wire)

// visitIn reports b, the ClassPortInfo a REJ, SIDR_REP or APR redirects
// to, under f (nothing when b is shorter than a ClassPortInfo).
func (f *classPortInfoFields) visitIn(v field.Visitor, b []byte) {
	if len(b) < classPortInfoLen {
		return
	}
	c := redirects.Get().(*ClassPortInfo)
	f.decode(c, b) // sets every field
	f.visit(c, v, classPortInfoLen)
	redirects.Put(c)
}

// redirects holds the ClassPortInfo visitIn decodes into: the layout's
// walk takes a pointer it cannot prove stays on the stack, and a view of
// a redirect should not allocate.
var redirects = sync.Pool{New: func() any { return new(ClassPortInfo) }}
