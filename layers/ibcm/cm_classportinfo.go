package ibcm

import (
	"encoding/binary"
	"net/netip"

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

type classPortInfoFields struct {
	group, base, class, cap, cap2, resp, rgid, rtc, rsl, rfl, rlid, rpkey, rqp, rqkey,
	tgid, ttc, tsl, tfl, tlid, tpkey, thl, tqp, tqkey *field.Field
}

func newClassPortInfoFields(p string) classPortInfoFields {
	return classPortInfoFields{
		group: ProtoCM.Group(p, "ClassPortInfo"),
		base:  ProtoCM.Uint(p+".baseversion", 8, "Base Version"),
		class: ProtoCM.Uint(p+".classversion", 8, "Class Version"),
		cap:   ProtoCM.Hex(p+".capabilitymask", 16, "Capability Mask"),
		cap2:  ProtoCM.Hex(p+".capabilitymask2", 27, "Capability Mask 2"),
		resp:  ProtoCM.Uint(p+".resptimevalue", 5, "Response Time Value (4.096 µs · 2^n)"),
		rgid:  ProtoCM.Addr(p+".redirectgid", "Redirect GID"),
		rtc:   ProtoCM.Hex(p+".redirecttc", 8, "Redirect Traffic Class"),
		rsl:   ProtoCM.Uint(p+".redirectsl", 4, "Redirect SL"),
		rfl:   ProtoCM.Hex(p+".redirectfl", 20, "Redirect Flow Label"),
		rlid:  ProtoCM.Uint(p+".redirectlid", 16, "Redirect LID"),
		rpkey: ProtoCM.Hex(p+".redirectpkey", 16, "Redirect P_Key"),
		rqp:   ProtoCM.Hex(p+".redirectqp", 24, "Redirect QP"),
		rqkey: ProtoCM.Hex(p+".redirectqkey", 32, "Redirect Q_Key"),
		tgid:  ProtoCM.Addr(p+".trapgid", "Trap GID"),
		ttc:   ProtoCM.Hex(p+".traptc", 8, "Trap Traffic Class"),
		tsl:   ProtoCM.Uint(p+".trapsl", 4, "Trap SL"),
		tfl:   ProtoCM.Hex(p+".trapfl", 20, "Trap Flow Label"),
		tlid:  ProtoCM.Uint(p+".traplid", 16, "Trap LID"),
		tpkey: ProtoCM.Hex(p+".trappkey", 16, "Trap P_Key"),
		thl:   ProtoCM.Uint(p+".traphl", 8, "Trap Hop Limit"),
		tqp:   ProtoCM.Hex(p+".trapqp", 24, "Trap QP"),
		tqkey: ProtoCM.Hex(p+".trapqkey", 32, "Trap Q_Key"),
	}
}

var cpiFields = newClassPortInfoFields("cm.cpi")

func (c *ClassPortInfo) decode(b []byte) {
	w := binary.BigEndian.Uint32(b[4:])
	rw := binary.BigEndian.Uint32(b[24:])
	tw := binary.BigEndian.Uint32(b[56:])
	*c = ClassPortInfo{
		BaseVersion: b[0], ClassVersion: b[1],
		CapabilityMask:  binary.BigEndian.Uint16(b[2:]),
		CapabilityMask2: w >> 5, RespTimeValue: uint8(w & 0x1f),
		RedirectTC: uint8(rw >> 24), RedirectSL: uint8(rw >> 20 & 0x0f), RedirectFL: rw & 0xfffff,
		RedirectLID:      binary.BigEndian.Uint16(b[28:]),
		RedirectPKey:     binary.BigEndian.Uint16(b[30:]),
		RedirectReserved: b[32],
		RedirectQP:       binary.BigEndian.Uint32(b[32:]) & 0xffffff,
		RedirectQKey:     binary.BigEndian.Uint32(b[36:]),
		TrapTC:           uint8(tw >> 24), TrapSL: uint8(tw >> 20 & 0x0f), TrapFL: tw & 0xfffff,
		TrapLID:  binary.BigEndian.Uint16(b[60:]),
		TrapPKey: binary.BigEndian.Uint16(b[62:]),
		TrapHL:   b[64],
		TrapQP:   binary.BigEndian.Uint32(b[64:]) & 0xffffff,
		TrapQKey: binary.BigEndian.Uint32(b[68:]),
	}
	copy(c.RedirectGID[:], b[8:24])
	copy(c.TrapGID[:], b[40:56])
}

func (c *ClassPortInfo) encode(b []byte) {
	b[0], b[1] = c.BaseVersion, c.ClassVersion
	binary.BigEndian.PutUint16(b[2:], c.CapabilityMask)
	binary.BigEndian.PutUint32(b[4:], c.CapabilityMask2<<5|uint32(c.RespTimeValue&0x1f))
	copy(b[8:24], c.RedirectGID[:])
	binary.BigEndian.PutUint32(b[24:], uint32(c.RedirectTC)<<24|uint32(c.RedirectSL&0x0f)<<20|c.RedirectFL&0xfffff)
	binary.BigEndian.PutUint16(b[28:], c.RedirectLID)
	binary.BigEndian.PutUint16(b[30:], c.RedirectPKey)
	binary.BigEndian.PutUint32(b[32:], uint32(c.RedirectReserved)<<24|c.RedirectQP&0xffffff)
	binary.BigEndian.PutUint32(b[36:], c.RedirectQKey)
	copy(b[40:56], c.TrapGID[:])
	binary.BigEndian.PutUint32(b[56:], uint32(c.TrapTC)<<24|uint32(c.TrapSL&0x0f)<<20|c.TrapFL&0xfffff)
	binary.BigEndian.PutUint16(b[60:], c.TrapLID)
	binary.BigEndian.PutUint16(b[62:], c.TrapPKey)
	binary.BigEndian.PutUint32(b[64:], uint32(c.TrapHL)<<24|c.TrapQP&0xffffff)
	binary.BigEndian.PutUint32(b[68:], c.TrapQKey)
}

// visit reports the ClassPortInfo of a Get, Set or GetResp.
func (c *ClassPortInfo) visit(v field.Visitor) { cpiFields.visit(v, c) }

// visitIn reports b, the ClassPortInfo a REJ, SIDR_REP or APR redirects
// to, under f (nothing when b is shorter than a ClassPortInfo).
func (f *classPortInfoFields) visitIn(v field.Visitor, b []byte) {
	if len(b) < classPortInfoLen {
		return
	}
	var c ClassPortInfo
	c.decode(b)
	f.visit(v, &c)
}

func (f *classPortInfoFields) visit(v field.Visitor, c *ClassPortInfo) {
	v.Begin(f.group)
	v.Uint(f.base, uint64(c.BaseVersion))
	v.Uint(f.class, uint64(c.ClassVersion))
	v.Uint(f.cap, uint64(c.CapabilityMask))
	v.Uint(f.cap2, uint64(c.CapabilityMask2))
	v.Uint(f.resp, uint64(c.RespTimeValue))
	v.Addr(f.rgid, netip.AddrFrom16(c.RedirectGID))
	v.Uint(f.rtc, uint64(c.RedirectTC))
	v.Uint(f.rsl, uint64(c.RedirectSL))
	v.Uint(f.rfl, uint64(c.RedirectFL))
	v.Uint(f.rlid, uint64(c.RedirectLID))
	v.Uint(f.rpkey, uint64(c.RedirectPKey))
	v.Uint(f.rqp, uint64(c.RedirectQP))
	v.Uint(f.rqkey, uint64(c.RedirectQKey))
	v.Addr(f.tgid, netip.AddrFrom16(c.TrapGID))
	v.Uint(f.ttc, uint64(c.TrapTC))
	v.Uint(f.tsl, uint64(c.TrapSL))
	v.Uint(f.tfl, uint64(c.TrapFL))
	v.Uint(f.tlid, uint64(c.TrapLID))
	v.Uint(f.tpkey, uint64(c.TrapPKey))
	v.Uint(f.thl, uint64(c.TrapHL))
	v.Uint(f.tqp, uint64(c.TrapQP))
	v.Uint(f.tqkey, uint64(c.TrapQKey))
	v.End()
}
