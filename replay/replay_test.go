package replay

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/layers/rpcrdma"
)

func TestParseHex(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []byte
		err  string
	}{
		{"f6ab0e1801010303", []byte{0xf6, 0xab, 0x0e, 0x18, 1, 1, 3, 3}, ""},
		{"0xF6AB 0e18:01", []byte{0xf6, 0xab, 0x0e, 0x18, 1}, ""},
		{"", []byte{}, ""},
		{"f6a", nil, "odd number of digits"},
		{"zz", nil, "invalid byte"},
	} {
		got, err := ParseHex(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseHex(%q): error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !bytes.Equal(got, tc.want) {
			t.Errorf("ParseHex(%q) = %x, %v; want %x", tc.in, got, err, tc.want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	ok := Config{Role: RoleClient, Addr: "192.0.2.2", Port: 20049, PrivateData: make([]byte, 255)}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		c    Config
		want string
	}{
		{Config{Role: RoleClient, Port: 1}, "no server address"},
		{Config{Role: "peer", Port: 1}, "want client or server"},
		{Config{Role: RoleServer, Port: 70000}, "port 70000"},
		{Config{Role: RoleServer, Port: 1, PrivateData: make([]byte, 256)}, "at most 255"},
		{Config{Role: RoleClient, Addr: "x", Port: 1, Reject: true}, "only the server rejects"},
	} {
		if err := tc.c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.c, err, tc.want)
		}
	}
}

func TestReportJSON(t *testing.T) {
	r := Report{Role: RoleServer, Event: EventEstablished, SentPrivateData: HexBytes{0xf6, 0xab},
		ReceivedPrivateDataLen: 2, ReceivedPrivateData: HexBytes{0x0e, 0x18}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"role":"server","event":"established","sent_private_data":"f6ab","received_private_data_len":2,"received_private_data":"0e18"}`
	if string(b) != want {
		t.Errorf("got %s\nwant %s", b, want)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil || !bytes.Equal(back.ReceivedPrivateData, r.ReceivedPrivateData) {
		t.Errorf("round trip: %+v, %v", back, err)
	}
}

// TestNullCall: the Send of --send-null decodes as RPC-over-RDMA v1
// RDMA_MSG carrying an NFSv4 NULL call, nothing left over.
func TestNullCall(t *testing.T) {
	var m rpcrdma.Message
	if err := m.Decode(NullCall, nil); err != nil {
		t.Fatal(err)
	}
	h, r := &m.Header, &m.RPC
	if !m.HasHeader || !m.HasRPC || h.Version != 1 || h.Proc != rpcrdma.ProcMsg || h.Credits != 1 || h.XID != 1 ||
		r.XID != 1 || r.MsgType != rpcrdma.MsgCall || r.Program != 100003 || r.ProgVersion != 4 || r.Procedure != 0 {
		t.Errorf("header %+v, rpc %+v", h, r)
	}
	if fs := m.AppendFindings(nil); len(fs) != 0 {
		t.Errorf("findings %v", fs)
	}
}
