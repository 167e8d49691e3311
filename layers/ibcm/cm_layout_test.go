package ibcm

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"

	"github.com/cmpd-dissect/cmpd-dissect/field"
)

// cmReserved are the reserved bits of each CM message's fixed fields, as
// IBTA vol. 1 §12.6 (and §13.4.8.1 for ClassPortInfo) gives them: octet →
// bits.
var cmReserved = map[uint16]map[int]byte{
	AttrClassPortInfo: {32: 0xff},
	AttrREQ: {4: 0xff, 24: 0xff, 25: 0xff, 26: 0xff, 27: 0xff,
		52 + 38: 0x0f, 52 + 39: 0xc0, 52 + 42: 0x07, 52 + 43: 0x07, // primary path
		96 + 38: 0x0f, 96 + 39: 0xc0, 96 + 42: 0x07, 96 + 43: 0x03}, // alternate path; bit 2 of octet 139 is SAP Supported
	AttrMRA:     {8: 0x3f, 9: 0x07},
	AttrREJ:     {8: 0x3f, 9: 0x01},
	AttrREP:     {27: 0x0f},
	AttrRTU:     {},
	AttrDREQ:    {11: 0xff},
	AttrDREP:    {},
	AttrSIDRReq: {6: 0xff, 7: 0xff},
	AttrSIDRRep: {},
	AttrLAP: {8: 0xff, 9: 0xff, 10: 0xff, 11: 0xff, 15: 0x07, 16: 0xff, 17: 0xff, 18: 0xff, 19: 0xff,
		20 + 38: 0x0f, 20 + 41: 0xc0, 20 + 42: 0x07, 20 + 43: 0x07},
	AttrAPR: {10: 0xff, 11: 0xff},
}

// TestCMLayoutReserved checks, bit by bit, that a message's layout
// reports exactly the reserved bits of the specification.
func TestCMLayoutReserved(t *testing.T) {
	for id, m := range messages {
		want, ok := cmReserved[id]
		if !ok {
			t.Errorf("%s: no reserved bits listed", m.name)
			continue
		}
		l := (&CM{AttributeID: id}).body()
		b := make([]byte, m.hdr)
		for i := range b {
			for bit := byte(0x80); bit != 0; bit >>= 1 {
				b[i] = bit
				if got := l.reserved(b); got != (want[i]&bit != 0) {
					t.Errorf("%s octet %d bit %#02x: reserved %v", m.name, i, bit, got)
				}
			}
			b[i] = 0
		}
	}
}

// TestCMLayoutRoundTrip decodes fixed fields of random values (reserved
// bits clear) and encodes them again: every bit of a message must land
// in a field and back in place, split fields (REP and SIDR_REP Vendor ID)
// included.
func TestCMLayoutRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for id, m := range messages {
		for range 20 {
			data := make([]byte, CMDataLen)
			for i := range data {
				data[i] = byte(r.Uint32())
			}
			for i, bits := range cmReserved[id] {
				data[i] &^= bits
			}
			c := NewCM(&MAD{AttributeID: id, Method: MethodSend})
			if err := c.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
				t.Fatalf("%s: %v", m.name, err)
			}
			buf := gopacket.NewSerializeBuffer()
			if err := c.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
				t.Fatalf("%s: %v", m.name, err)
			}
			got := buf.Bytes()
			if m.pd == 0 { // ClassPortInfo: zeros after its 72 octets
				clear(data[m.hdr:])
			}
			if !bytes.Equal(got, data) {
				t.Fatalf("%s: encoded\n%x\nwant\n%x", m.name, got, data)
			}
		}
	}
}

// TestCMRedirectVisitAllocs checks that showing a redirect's ClassPortInfo
// (decoded from the APR's Additional Information) does not allocate.
func TestCMRedirectVisitAllocs(t *testing.T) {
	data := make([]byte, CMDataLen)
	data[9] = 4          // AP Status: redirect
	data[12+1] = 2       // the ClassPortInfo's Class Version
	data[12+36+3] = 0x99 // its Redirect Q_Key
	c := NewCM(&MAD{AttributeID: AttrAPR, Method: MethodSend})
	if err := c.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	seen := uintVisitor{}
	c.VisitFields(seen)
	if seen["cm.apr.cpi.classversion"] != 2 || seen["cm.apr.cpi.redirectqkey"] != 0x99 {
		t.Fatalf("the redirect's ClassPortInfo is not shown: %v", seen)
	}
	if n := testing.AllocsPerRun(100, func() { c.VisitFields(field.NopVisitor{}) }); n != 0 {
		t.Errorf("VisitFields of an APR redirect: %v allocations", n)
	}
}

// uintVisitor records the integer fields a layer shows, by name.
type uintVisitor map[string]uint64

func (u uintVisitor) Uint(f *field.Field, v uint64) { u[f.Name] = v }
func (uintVisitor) Int(*field.Field, int64)         {}
func (uintVisitor) Bool(*field.Field, bool)         {}
func (uintVisitor) String(*field.Field, string)     {}
func (uintVisitor) Bytes(*field.Field, []byte)      {}
func (uintVisitor) Addr(*field.Field, netip.Addr)   {}
func (uintVisitor) Begin(*field.Field)              {}
func (uintVisitor) End()                            {}

// TestCMFixedCut cuts each message's fixed fields at every length: the
// decode returns the error for the fixed fields and shows exactly the
// fields whose octets were all present, with the whole message's values.
// Which octets a field is made of is found here from the decode itself
// (the fields a flipped bit changes), not from the layout; a field shown
// as part of a group (the service ID's prefix, protocol and port) is shown
// with the whole group.
func TestCMFixedCut(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	decode := func(id uint16, data []byte) (*CM, shownVisitor, error) {
		c := NewCM(&MAD{AttributeID: id, Method: MethodSend})
		err := c.DecodeFromBytes(data, gopacket.NilDecodeFeedback)
		seen := shownVisitor{}
		c.VisitFields(seen)
		return c, seen, err
	}
	for id, m := range messages {
		data := make([]byte, CMDataLen)
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		_, whole, _ := decode(id, data)
		// need: the octets of the message each field is made of end here.
		need := map[string]int{}
		for i := range m.hdr * 8 {
			data[i/8] ^= 0x80 >> (i % 8)
			_, flipped, _ := decode(id, data)
			data[i/8] ^= 0x80 >> (i % 8)
			for name, v := range flipped {
				if whole[name] != v {
					need[name] = max(need[name], i/8+1)
				}
			}
		}
		groupNeed := map[string]int{}
		for name, n := range need {
			g := group(name)
			groupNeed[g] = max(groupNeed[g], n)
		}
		for n := range m.hdr {
			c, cut, err := decode(id, data[:n:n]) // reading past n panics
			var de *DecodeError
			if !errors.As(err, &de) || de.Need != m.hdr || de.Have != n || !c.FixedCut() {
				t.Fatalf("%s cut at %d: error %v, fixed cut %v", m.name, n, err, c.FixedCut())
			}
			for name, v := range cut {
				if _, ok := whole[name]; !ok || whole[name] != v || need[name] > n {
					t.Errorf("%s cut at %d: shows %s = %s (whole: %s, made of octets up to %d)", m.name, n, name, v, whole[name], need[name])
				}
			}
			for name, k := range need {
				if _, ok := cut[name]; !ok && groupNeed[group(name)] <= n && k > 0 && !conditional(m, name) {
					t.Errorf("%s cut at %d: %s (octets up to %d) not shown", m.name, n, name, k)
				}
			}
		}
		c, _, _ := decode(id, data[:0])
		if id == AttrREQ && (c.Holds(&c.REQ.LocalQPN) || !func() bool { c, _, _ := decode(id, data[:need["cm.req.localqpn"]]); return c.Holds(&c.REQ.LocalQPN) }()) {
			t.Errorf("REQ: Holds(Local QPN) is not whether its octets (to %d) were captured", need["cm.req.localqpn"])
		}
	}
}

// group is the field group a field is shown in, by its name: the service
// ID's parts show together.
func group(name string) string {
	if i := strings.Index(name, ".serviceid"); i >= 0 {
		return name[:i+len(".serviceid")]
	}
	return name
}

// conditional reports a field shown after the fixed fields from what they
// say (a REJ's Additional Rejection Information, a redirect's
// ClassPortInfo), or of the private data: not a fixed field of a cut
// message.
func conditional(m message, name string) bool {
	return strings.Contains(name, ".ari") || strings.Contains(name, "cpi.") || strings.Contains(name, "private") ||
		strings.HasPrefix(name, "pvtdata") || strings.HasPrefix(name, "rpcrdma")
}

// shownVisitor records every field a layer shows, by name, as text.
type shownVisitor map[string]string

func (s shownVisitor) Uint(f *field.Field, v uint64)     { s[f.Name] = fmt.Sprint(v) }
func (s shownVisitor) Int(f *field.Field, v int64)       { s[f.Name] = fmt.Sprint(v) }
func (s shownVisitor) Bool(f *field.Field, v bool)       { s[f.Name] = fmt.Sprint(v) }
func (s shownVisitor) String(f *field.Field, v string)   { s[f.Name] = v }
func (s shownVisitor) Bytes(f *field.Field, v []byte)    { s[f.Name] = fmt.Sprintf("%x", v) }
func (s shownVisitor) Addr(f *field.Field, v netip.Addr) { s[f.Name] = v.String() }
func (shownVisitor) Begin(*field.Field)                  {}
func (shownVisitor) End()                                {}
