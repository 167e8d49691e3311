package ulp

import (
	"bytes"
	"encoding/hex"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/field/fieldtest"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

func serialize(t testing.TB, ls ...gopacket.SerializableLayer) []byte {
	t.Helper()
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, ls...); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type decoded interface {
	field.Layer
	field.Summarizer
	gopacket.DecodingLayer
	gopacket.SerializableLayer
}

// The wire bytes of each message, decoded to the values and summary
// expected, and written back to the same bytes. The SMB Direct negotiate
// messages are [MS-SMBD] §4.1's example.
func TestDecodeSerialize(t *testing.T) {
	for _, tc := range []struct {
		name    string
		wire    string
		l       decoded
		want    decoded
		summary string
	}{
		{"SMBD negotiate request (MS-SMBD §4.1)", "0001 0001 0000 0a00 00040000 00040000 00000200", &SMBD{},
			&SMBD{Message: SMBDNegotiateRequest, MinVersion: 0x100, MaxVersion: 0x100, CreditsRequested: 10,
				PreferredSendSize: 1024, MaxReceiveSize: 1024, MaxFragmentedSize: 128 << 10},
			"SMBD Negotiate Request credits=10 send=1024 recv=1024 frag=131072"},
		{"SMBD negotiate response (MS-SMBD §4.1)", "0001 0001 0001 0000 0a00 0a00 00000000 00001000 00040000 00040000 00000200", &SMBD{},
			&SMBD{Message: SMBDNegotiateResponse, MinVersion: 0x100, MaxVersion: 0x100, NegotiatedVersion: 0x100,
				CreditsRequested: 10, CreditsGranted: 10, MaxReadWriteSize: 1 << 20, PreferredSendSize: 1024,
				MaxReceiveSize: 1024, MaxFragmentedSize: 128 << 10},
			"SMBD Negotiate Response status=0x0 credits=10 rw=1048576 send=1024 recv=1024"},
		{"SMBD data transfer", "0a00 0100 0100 0000 00000000 18000000 04000000 00000000 fe534d42", &SMBD{},
			&SMBD{CreditsRequested: 10, CreditsGranted: 1, Flags: 1, DataOffset: 24, DataLength: 4, Data: []byte{0xfe, 'S', 'M', 'B'}},
			"SMBD Data credits=1 len=4"},
		{"SMBD keep-alive", "0a00 0100 0000 0000 00000000 00000000 00000000", &SMBD{},
			&SMBD{CreditsRequested: 10, CreditsGranted: 1}, "SMBD Data credits=1 len=0"},
		{"iSER control with write STag", "18000000 00001234 ffff888000001000 00000000 0000000000000000", &ISER{},
			&ISER{Opcode: ISEROpControl, W: true, WriteSTag: 0x1234, WriteBaseOff: 0xffff888000001000},
			"iSER iSCSI control-type PDU write_stag=0x1234 va=0xffff888000001000"},
		{"iSER Hello", "20000000 00000000 0000000000000000 00000000 0000000000000000", &ISER{},
			&ISER{Opcode: ISEROpHello}, "iSER iSER Hello"},
		{"NVMe-oF response capsule", "00000000 00000000 0100 0000 0300 0000", &NVMe{},
			&NVMe{Response: true, SQHead: 1, CommandID: 3}, "NVMe-oF Response cid=3 status=0x0"},
		{"NVMe-oF Fabrics Connect", "7f000000 01" + strings.Repeat("00", 59), &NVMe{},
			&NVMe{Opcode: NVMeFabricsOpcode, FCType: 1, Data: []byte{}}, "NVMe-oF Fabrics Connect cid=0"},
		{"IPoIB-CM IPv4", "0800 0000 4500001c 00000000 4011 0000 0a000002 0a000001", &IPoIB{},
			&IPoIB{Type: 0x0800, Src: netip.MustParseAddr("10.0.0.2"), Dst: netip.MustParseAddr("10.0.0.1")},
			"IPoIB-CM IPv4 10.0.0.2 → 10.0.0.1"},
		{"Send payload", "00000001", &Payload{}, &Payload{}, "Send payload 4 octets"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wire := testcap.Hex(t, tc.wire)
			if err := tc.l.DecodeFromBytes(wire, gopacket.NilDecodeFeedback); err != nil {
				t.Fatal(err)
			}
			if got := string(tc.l.AppendSummary(nil)); got != tc.summary {
				t.Errorf("summary %q, want %q", got, tc.summary)
			}
			// Compare the decoded values without the slices of the wire.
			got := reflect.ValueOf(tc.l).Elem()
			want := reflect.ValueOf(tc.want).Elem()
			for i := 0; i < got.NumField(); i++ {
				if got.Type().Field(i).Name == "BaseLayer" {
					continue
				}
				if !reflect.DeepEqual(got.Field(i).Interface(), want.Field(i).Interface()) {
					t.Errorf("%s = %v, want %v", got.Type().Field(i).Name, got.Field(i).Interface(), want.Field(i).Interface())
				}
			}
			var ls []gopacket.SerializableLayer
			ls = append(ls, tc.l)
			if p := payloadOf(tc.l); len(p) > 0 {
				ls = append(ls, gopacket.Payload(p))
			}
			if out := serialize(t, ls...); !bytes.Equal(out, wire) {
				t.Errorf("serialized\n% x\nwant\n% x", out, wire)
			}
		})
	}
}

func payloadOf(l gopacket.DecodingLayer) []byte {
	if p, ok := l.(interface{ LayerPayload() []byte }); ok {
		return p.LayerPayload()
	}
	return nil
}

// Sends too short for their ULP's header are errors naming the header.
func TestShort(t *testing.T) {
	for _, l := range []decoded{&SMBD{}, &ISER{}, &NVMe{}, &IPoIB{}} {
		err := l.DecodeFromBytes([]byte{0, 0, 0}, gopacket.NilDecodeFeedback)
		if err == nil || !IsShort(err) {
			t.Errorf("%T: error %v, want a ShortError", l, err)
		}
	}
}

func TestByPort(t *testing.T) {
	for port, want := range map[uint16]Kind{20049: KindRPCRDMA, 2049: KindRPCRDMA, 445: KindSMBDirect, 5445: KindSMBDirect,
		4420: KindNVMeoF, 3260: KindISER, 860: KindISER, 7174: KindOther, 987: KindOther} {
		if got := ByPort(port); got != want {
			t.Errorf("ByPort(%d) = %v, want %v", port, got, want)
		}
	}
}

// Any bytes decode or fail cleanly, and a decoded layer's fields and
// summary can be produced.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{"0001000100000a000004000000040000000000020", "18000000000012340000000000000000", "0800000045"} {
		b, _ := hex.DecodeString(s)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, l := range []decoded{&Payload{}, &SMBD{}, &ISER{}, &NVMe{}, &IPoIB{}} {
			if l.DecodeFromBytes(data, gopacket.NilDecodeFeedback) != nil {
				continue
			}
			l.VisitFields(&fieldtest.Counter{})
			l.AppendSummary(nil)
			serialize(t, l)
		}
	})
}
