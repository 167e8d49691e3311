package pvtdata

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
)

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func zeros(n int) []byte { return make([]byte, n) }

func msg(version, flags, send, recv byte) []byte {
	return []byte{0xf6, 0xab, 0x0e, 0x18, version, flags, send, recv}
}

func codes(fs []finding.Finding) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, f.Code)
	}
	return out
}

// One reading of one buffer in one mode: what the receiver finds and acts
// on, and every finding code, in order.
type readCase struct {
	mode    Mode
	found   bool
	offset  int
	valid   bool
	overrun bool
	eff     Effective
	codes   []string
}

var (
	eff4096R  = Effective{SendSize: 4096, ReceiveSize: 4096, RemoteInvalidation: true}
	eff4096   = Effective{SendSize: 4096, ReceiveSize: 4096}
	defaults_ = Defaults
)

// everyMode is the want of a buffer every reader reads alike.
func everyMode(found bool, offset int, valid, overrun bool, eff Effective, codes ...string) (w [3]readCase) {
	for i, m := range Modes {
		w[i] = readCase{m, found, offset, valid, overrun, eff, codes}
	}
	return w
}

func TestRead(t *testing.T) {
	tests := []struct {
		name string
		buf  []byte
		// per mode, in Modes order: rfc8797, draft, linux
		want [3]readCase
	}{
		{
			name: "kernel client, RFC 8797 §4 layout, R=1 4KiB/4KiB",
			buf:  kernelClient,
			want: everyMode(true, 0, true, false, eff4096R),
		},
		{
			name: "kernel server, R=0",
			buf:  kernelServer,
			want: everyMode(true, 0, true, false, eff4096),
		},
		{
			name: "kernel client zero-padded to the 56 octets of a REQ after rdma_cm: padding is not a finding",
			buf:  cat(kernelClient, zeros(48)),
			want: everyMode(true, 0, true, false, eff4096R),
		},
		{
			name: "§5.2 search: identifier at offset 5, no alignment",
			buf:  cat([]byte{1, 2, 3, 4, 5}, kernelClient, zeros(3)),
			want: [3]readCase{
				{ModeRFC8797, true, 5, true, false, eff4096R, []string{CodeNotAtOffsetZero, CodeReaderDivergence}},
				{ModeDraft, false, -1, false, false, defaults_, []string{CodeIdentifierElsewhere, CodeReaderDivergence}},
				{ModeLinux, false, -1, false, false, defaults_, []string{CodeIdentifierElsewhere, CodeReaderDivergence}},
			},
		},
		{
			name: "§5.2 unrecognised version 2: ignored by every reader",
			buf:  msg(2, 1, 3, 3),
			want: everyMode(true, 0, false, false, defaults_, CodeUnknownVersion),
		},
		{
			name: "§6 version 2 may define the reserved bits and octets after byte 8: not judged",
			buf:  cat(msg(2, 0xff, 3, 3), []byte{1, 2, 3}),
			want: everyMode(true, 0, false, false, defaults_, CodeUnknownVersion),
		},
		{
			name: "§5.2 overrun: 6 octets; Linux does not check the length and reads past the end",
			buf:  msg(1, 1, 3, 3)[:6],
			want: [3]readCase{
				{ModeRFC8797, true, 0, false, true, defaults_, []string{CodeOverrun, CodeReaderDivergence}},
				{ModeDraft, true, 0, false, true, defaults_, []string{CodeOverrun, CodeReaderDivergence}},
				{ModeLinux, true, 0, true, true, Effective{SendSize: 1024, ReceiveSize: 1024, RemoteInvalidation: true}, []string{CodeOverrun, CodeReaderDivergence}},
			},
		},
		{
			name: "overrun before the Version octet: only the overrun is reported",
			buf:  cat(zeros(2), []byte{0xf6, 0xab, 0x0e, 0x18}),
			want: [3]readCase{
				{ModeRFC8797, true, 2, false, true, defaults_, []string{CodeOverrun, CodeNotAtOffsetZero}},
				{ModeDraft, false, -1, false, false, defaults_, []string{CodeIdentifierElsewhere}},
				{ModeLinux, false, -1, false, false, defaults_, []string{CodeIdentifierElsewhere}},
			},
		},
		{
			name: "§4 reserved bits set: a sender violation receivers ignore",
			buf:  msg(1, 0xff, 3, 3),
			want: everyMode(true, 0, true, false, eff4096R, CodeReservedBits),
		},
		{
			name: "two identifiers: the first is acted on, the second is trailing data",
			buf:  cat(kernelServer, msg(1, 1, 255, 255)),
			want: everyMode(true, 0, true, false, eff4096, CodeMultiple, CodeTrailingData),
		},
		{
			name: "byte-swapped identifier from a little-endian writer",
			buf:  []byte{0x18, 0x0e, 0xab, 0xf6, 1, 1, 3, 3},
			want: everyMode(false, -1, false, false, defaults_, CodeNotFound, CodeByteSwapped),
		},
		{
			name: "§5.1 no private data: defaults",
			buf:  nil,
			want: everyMode(false, -1, false, false, defaults_, CodeNotFound),
		},
		{
			name: "identifier cut short (3 octets): not found",
			buf:  []byte{0xf6, 0xab, 0x0e},
			want: everyMode(false, -1, false, false, defaults_, CodeNotFound),
		},
		{
			name: "non-zero octets after the message",
			buf:  cat(kernelClient, []byte{0, 0, 7}),
			want: everyMode(true, 0, true, false, eff4096R, CodeTrailingData),
		},
		{
			name: "largest sizes, 255 → 262144",
			buf:  msg(1, 0, 255, 255),
			want: everyMode(true, 0, true, false, Effective{SendSize: MaxSize, ReceiveSize: MaxSize}),
		},
		{
			name: "whole REQ private data with the 36-octet rdma_cm header in front",
			buf:  cat([]byte{0x00, 0x40, 0xaf, 0xf6}, zeros(12), []byte{0xc0, 0, 2, 2}, zeros(12), []byte{0xc0, 0, 2, 1}, kernelClient, zeros(48)),
			want: [3]readCase{
				{ModeRFC8797, true, 36, true, false, eff4096R, []string{CodeNotAtOffsetZero, CodeReaderDivergence}},
				{ModeDraft, false, -1, false, false, defaults_, []string{CodeIdentifierElsewhere, CodeReaderDivergence}},
				{ModeLinux, false, -1, false, false, defaults_, []string{CodeIdentifierElsewhere, CodeReaderDivergence}},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for i, w := range tc.want {
				if Modes[i] != w.mode {
					t.Fatalf("table order: %v at %d", w.mode, i)
				}
				r := Read(tc.buf, w.mode)
				got := readCase{r.Mode, r.Found, r.Offset, r.Valid, r.Overrun, r.Effective(), nil}
				p := Dissect(tc.buf, Hint{}, w.mode)
				got.codes = codes(p.AppendFindings(nil))
				if len(got.codes) == 0 {
					got.codes = nil
				}
				if !reflect.DeepEqual(got, w) {
					t.Errorf("%s:\n got %+v\nwant %+v", w.mode, got, w)
				}
				if p.Reading != r {
					t.Errorf("%s: Dissect's reading differs from Read's", w.mode)
				}
			}
		})
	}
}

func TestFindingDetails(t *testing.T) {
	// Offsets and severities of each finding are part of the contract.
	tests := []struct {
		buf     []byte
		mode    Mode
		code    string
		sev     finding.Severity
		offset  int
		section string
		text    string
	}{
		{nil, ModeRFC8797, CodeNotFound, finding.SeverityInfo, -1, "RFC 8797 §5.1", "no RPC-over-RDMA Format Identifier 0xf6ab0e18 in 0 octets"},
		{msg(7, 0, 0, 0), ModeRFC8797, CodeUnknownVersion, finding.SeverityWarning, 4, "RFC 8797 §5.2", "version 7"},
		{cat(zeros(3), msg(1, 0, 0, 0)[:6]), ModeRFC8797, CodeOverrun, finding.SeverityError, 3, "RFC 8797 §5.2", "overruns the 9-octet buffer by 2 octets: the message is ignored"},
		{msg(1, 0, 0, 0)[:7], ModeLinux, CodeOverrun, finding.SeverityError, 0, "RFC 8797 §5.2", "Linux receiver does not check the length"},
		{msg(1, 0x80, 0, 0), ModeRFC8797, CodeReservedBits, finding.SeverityWarning, 5, "RFC 8797 §4", "reserved bits are 0x40"},
		{cat(zeros(9), kernelClient), ModeRFC8797, CodeNotAtOffsetZero, finding.SeverityWarning, 9, "RFC 8797 §5.2", "offset 9, not 0"},
		{cat(zeros(9), kernelClient), ModeDraft, CodeIdentifierElsewhere, finding.SeverityWarning, 9, "RFC 8797 §5.2", "offset 9, not at offset 0 where a draft reader looks"},
		{cat(kernelClient, kernelClient), ModeRFC8797, CodeMultiple, finding.SeverityWarning, -1, "RFC 8797 §5.2", "occurs 2 times (offsets [0 8])"},
		{cat(zeros(2), []byte{0x18, 0x0e, 0xab, 0xf6}), ModeRFC8797, CodeByteSwapped, finding.SeverityWarning, 2, "RFC 8797 §4", "0x180eabf6 at offset 2"},
		{cat(kernelClient, []byte{1}), ModeRFC8797, CodeTrailingData, finding.SeverityInfo, 8, "RFC 8797 §6", "at offset 8"},
		{cat(zeros(1), kernelClient), ModeRFC8797, CodeReaderDivergence, finding.SeverityWarning, -1, "RFC 8797 §5.2",
			"rfc8797 reader: message at offset 1, send 4096 receive 4096 R=1; draft reader: no Format Identifier at offset 0, so the defaults send 1024 receive 1024 R=0; linux reader: no Format Identifier at offset 0"},
	}
	for _, tc := range tests {
		p := Dissect(tc.buf, Hint{}, tc.mode)
		var f *finding.Finding
		all := p.AppendFindings(nil)
		for i := range all {
			if all[i].Code == tc.code {
				f = &all[i]
			}
		}
		if f == nil {
			t.Errorf("% x (%s): no %s in %v", tc.buf, tc.mode, tc.code, codes(all))
			continue
		}
		if f.Severity != tc.sev || f.Offset != tc.offset || f.Section != tc.section || f.Layer != "pvtdata" {
			t.Errorf("%s: severity %v offset %d section %q layer %q, want %v %d %q pvtdata", tc.code, f.Severity, f.Offset, f.Section, f.Layer, tc.sev, tc.offset, tc.section)
		}
		if !strings.Contains(f.Message, tc.text) {
			t.Errorf("%s: message %q lacks %q", tc.code, f.Message, tc.text)
		}
	}
}

func TestCandidates(t *testing.T) {
	buf := bytes.Repeat(kernelClient, MaxCandidates+2)
	r := Read(buf, ModeRFC8797)
	if r.NumCandidates() != MaxCandidates+2 || len(r.Candidates()) != MaxCandidates {
		t.Fatalf("NumCandidates %d, len(Candidates) %d", r.NumCandidates(), len(r.Candidates()))
	}
	for i, c := range r.Candidates() {
		if int(c) != 8*i {
			t.Errorf("candidate %d at %d, want %d", i, c, 8*i)
		}
	}
	rep := NewReport(buf, ModeRFC8797)
	if len(rep.Candidates) != MaxCandidates || rep.Candidates[1] != 8 {
		t.Errorf("report candidates %v", rep.Candidates)
	}
}

func TestSizeCodec(t *testing.T) {
	// RFC 8797 §4.2: encoded = bytes/1024 - 1; decoded = (v+1)·1024. Every
	// one of the 256 values round-trips.
	for v := 0; v < 256; v++ {
		n := DecodeSize(uint8(v))
		if n != (v+1)*1024 {
			t.Fatalf("DecodeSize(%d) = %d", v, n)
		}
		e, err := EncodeSize(n)
		if err != nil || int(e) != v {
			t.Fatalf("EncodeSize(%d) = %d, %v; want %d", n, e, err, v)
		}
	}
	if DecodeSize(0) != DefaultInline || DecodeSize(255) != MaxSize {
		t.Error("DecodeSize bounds")
	}
	for _, bad := range []int{0, -1024, 1, 1023, 1025, 4097, 262143, 262145, 263168, 1 << 30} {
		_, err := EncodeSize(bad)
		if !errors.Is(err, ErrSizeOutOfRange) {
			t.Errorf("EncodeSize(%d) = %v, want ErrSizeOutOfRange", bad, err)
		}
		f, ok := SizeFinding("send size", bad)
		if !ok || f.Code != CodeSizeOutOfRange || f.Severity != finding.SeverityError || f.Section != "RFC 8797 §4.2" ||
			!strings.HasPrefix(f.Message, fmt.Sprintf("send size: %d octets", bad)) {
			t.Errorf("SizeFinding(%d) = %+v, %v", bad, f, ok)
		}
	}
	if _, ok := SizeFinding("x", 8192); ok {
		t.Error("SizeFinding(8192) reported a finding")
	}
}

func TestEncode(t *testing.T) {
	tests := []struct {
		send, recv int
		r          bool
		want       []byte
		err        string
	}{
		{4096, 4096, true, kernelClient, ""},
		{4096, 4096, false, kernelServer, ""},
		{1024, 262144, false, msg(1, 0, 0, 255), ""},
		{4096, 8192, true, msg(1, 1, 3, 7), ""},
		{1000, 4096, false, nil, "send size: size out of range: 1000 octets is outside 1024..262144"},
		{4096, 4097, false, nil, "receive size: size out of range: 4097 octets is not a multiple of 1024"},
		{4096, 262144 + 1024, false, nil, "receive size: size out of range"},
	}
	for _, tc := range tests {
		m, err := Encode(tc.send, tc.recv, tc.r)
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) || !errors.Is(err, ErrSizeOutOfRange) {
				t.Errorf("Encode(%d,%d) error %v, want %q", tc.send, tc.recv, err, tc.err)
			}
			continue
		}
		b := m.Bytes()
		if err != nil || !bytes.Equal(b[:], tc.want) {
			t.Errorf("Encode(%d,%d,%v) = % x, %v; want % x", tc.send, tc.recv, tc.r, b, err, tc.want)
		}
		back, err := ParseMessage(b[:])
		if err != nil || back != m || back.SendBytes() != tc.send || back.ReceiveBytes() != tc.recv || back.RemoteInvalidation() != tc.r {
			t.Errorf("round trip % x: %+v %v", b, back, err)
		}
		if got := m.AppendTo([]byte{9}); !bytes.Equal(got, cat([]byte{9}, tc.want)) {
			t.Errorf("AppendTo = % x", got)
		}
	}
	if _, err := ParseMessage(kernelClient[:7]); err == nil || !strings.Contains(err.Error(), "needs 8 octets, have 7") {
		t.Errorf("ParseMessage short: %v", err)
	}
}

func TestModes(t *testing.T) {
	for _, m := range Modes {
		got, err := ParseMode(m.String())
		if err != nil || got != m {
			t.Errorf("ParseMode(%q) = %v, %v", m.String(), got, err)
		}
	}
	if _, err := ParseMode("rfc"); err == nil || !strings.Contains(err.Error(), "want rfc8797, draft or linux") {
		t.Errorf("ParseMode(rfc): %v", err)
	}
	if Mode(9).String() != "Mode(9)" {
		t.Error(Mode(9).String())
	}
}

func TestSeverity(t *testing.T) {
	for _, s := range []finding.Severity{finding.SeverityInfo, finding.SeverityWarning, finding.SeverityError} {
		b, _ := s.MarshalText()
		var back finding.Severity
		if err := back.UnmarshalText(b); err != nil || back != s {
			t.Errorf("%v: %v %v", s, back, err)
		}
	}
	if _, err := finding.ParseSeverity("fatal"); err == nil {
		t.Error("ParseSeverity(fatal) accepted")
	}
	f := finding.Finding{Code: CodeOverrun, Severity: finding.SeverityError, Message: "m", Section: "RFC 8797 §5.2", Offset: -1}
	b, _ := json.Marshal(f)
	if string(b) != `{"code":"pvtdata.overrun","severity":"error","message":"m","section":"RFC 8797 §5.2"}` {
		t.Errorf("finding JSON %s", b)
	}
	f.Offset = 3
	b, _ = json.Marshal(f)
	if !strings.HasSuffix(string(b), `"offset":3}`) {
		t.Errorf("finding JSON %s", b)
	}
	if f.String() != "error pvtdata.overrun: m (RFC 8797 §5.2)" {
		t.Error(f.String())
	}
}

func TestNegotiate(t *testing.T) {
	tests := []struct {
		name           string
		client, server []byte // nil: absent
		mode           Mode
		want           Negotiated
	}{
		{"kernel client and server", kernelClient, kernelServer, ModeRFC8797, Negotiated{4096, 4096, false}},
		{"both set R: the responder may Send with Invalidate (§4.1)", kernelClient, msg(1, 1, 3, 3), ModeRFC8797, Negotiated{4096, 4096, true}},
		{"§4.2 min of own send and peer receive, each way", msg(1, 1, 7, 3), msg(1, 1, 15, 31), ModeRFC8797, Negotiated{8192, 4096, true}},
		{"client absent: §5.1 defaults for it", nil, msg(1, 1, 15, 31), ModeRFC8797, Negotiated{1024, 1024, false}},
		{"server absent", kernelClient, nil, ModeRFC8797, Negotiated{1024, 1024, false}},
		{"both absent", nil, nil, ModeRFC8797, Negotiated{1024, 1024, false}},
		{"server invalid (version 2)", kernelClient, msg(2, 1, 3, 3), ModeRFC8797, Negotiated{1024, 1024, false}},
		{"client empty", []byte{}, kernelServer, ModeRFC8797, Negotiated{1024, 1024, false}},
		{"server's message at offset 4: rfc8797 acts on it", msg(1, 1, 63, 63), cat(zeros(4), msg(1, 1, 31, 31)), ModeRFC8797, Negotiated{32768, 32768, true}},
		{"server's message at offset 4: linux does not", msg(1, 1, 63, 63), cat(zeros(4), msg(1, 1, 31, 31)), ModeLinux, Negotiated{1024, 1024, false}},
		{"server's message at offset 4: draft does not", msg(1, 1, 63, 63), cat(zeros(4), msg(1, 1, 31, 31)), ModeDraft, Negotiated{1024, 1024, false}},
	}
	for _, tc := range tests {
		got := NegotiateBuffers(tc.client, tc.server, tc.mode)
		if got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if got := Negotiate(Defaults, Defaults); got != (Negotiated{1024, 1024, false}) {
		t.Errorf("defaults: %+v", got)
	}
}

func TestReport(t *testing.T) {
	rep := NewReport(cat(zeros(1), msg(1, 3, 3, 7)), ModeRFC8797)
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	// The keys issue 2 fixes, with their values.
	want := map[string]any{
		"found": true, "offset": 1.0, "candidates": []any{1.0}, "valid": true, "version": 1.0,
		"remote_invalidation": true, "send_size": 4096.0, "receive_size": 8192.0, "reserved": 1.0,
		"effective": map[string]any{"send_size": 4096.0, "receive_size": 8192.0, "remote_invalidation": true},
		"mode":      "rfc8797", "ulp": "rpcrdma-v1", "length": 9.0, "hex": "00f6ab0e1801030307", "ulp_offset": 0.0,
	}
	for k, v := range want {
		if !reflect.DeepEqual(m[k], v) {
			t.Errorf("%s = %#v, want %#v", k, m[k], v)
		}
	}
	fs := m["findings"].([]any)
	var got []string
	for _, f := range fs {
		fm := f.(map[string]any)
		for _, k := range []string{"code", "severity", "message", "section"} {
			if _, ok := fm[k]; !ok {
				t.Errorf("finding lacks %q: %v", k, fm)
			}
		}
		got = append(got, fm["code"].(string))
	}
	if !reflect.DeepEqual(got, []string{CodeReservedBits, CodeNotAtOffsetZero, CodeReaderDivergence}) {
		t.Errorf("findings %v", got)
	}
	if rs := m["readers"].([]any); len(rs) != 3 || rs[2].(map[string]any)["mode"] != "linux" {
		t.Errorf("readers %v", rs)
	}

	// Not found: offset -1, empty (not null) lists, defaults.
	b, _ = json.Marshal(NewReport(nil, ModeDraft))
	for _, s := range []string{`"found":false`, `"offset":-1`, `"candidates":[]`, `"valid":false`, `"version":0`,
		`"effective":{"send_size":1024,"receive_size":1024,"remote_invalidation":false}`, `"code":"pvtdata.not-found"`} {
		if !strings.Contains(string(b), s) {
			t.Errorf("not-found report lacks %s: %s", s, b)
		}
	}
}

func TestAppendDivergence(t *testing.T) {
	if got := AppendDivergence(nil, kernelClient); len(got) != 0 {
		t.Errorf("kernel bytes diverge: %v", got)
	}
	pre := []finding.Finding{{Code: "x"}}
	got := AppendDivergence(pre, msg(1, 1, 3, 3)[:7])
	if len(got) != 2 || got[1].Code != CodeReaderDivergence || got[1].Severity != finding.SeverityWarning {
		t.Fatalf("%v", got)
	}
	if !strings.Contains(got[1].Message, "linux reader: message at offset 0, reading past the end of the buffer, send 4096 receive 1024 R=1") ||
		!strings.Contains(got[1].Message, "rfc8797 reader: identifier at offset 0, message overruns the buffer, so the defaults") {
		t.Errorf("message %q", got[1].Message)
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		buf  []byte
		mode Mode
		want string
	}{
		{kernelClient, ModeRFC8797, "rfc8797 reader: message at offset 0, send 4096 receive 4096 R=1"},
		{nil, ModeRFC8797, "rfc8797 reader: no Format Identifier, so the defaults send 1024 receive 1024 R=0"},
		{msg(3, 0, 0, 0), ModeDraft, "draft reader: identifier at offset 0, version 3 not recognised, so the defaults send 1024 receive 1024 R=0"},
		{msg(1, 0, 0, 0)[:4], ModeLinux, "linux reader: identifier at offset 0, message overruns the buffer, so the defaults send 1024 receive 1024 R=0"},
	}
	for _, tc := range tests {
		r := Read(tc.buf, tc.mode)
		if got := r.Describe(); got != tc.want {
			t.Errorf("Describe(% x, %s) = %q, want %q", tc.buf, tc.mode, got, tc.want)
		}
	}
}
