package view

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/conn"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

// ConnJSON is the object "cmpd-dissect conns --json" prints for one
// connection, one per line. The keys are stable; frames are null when the
// step was not seen.
type ConnJSON struct {
	ID        int    `json:"id"`
	Kind      string `json:"kind"`
	Transport string `json:"transport"`
	Client    string `json:"client"`
	Server    string `json:"server"`
	// ServiceID is the 64-bit service ID in hex ("0x0000000001064e51"),
	// null when unknown; Service says what it means.
	ServiceID *string `json:"service_id"`
	Service   string  `json:"service"`
	ClientQPN *uint32 `json:"client_qpn"`
	ServerQPN *uint32 `json:"server_qpn"`
	State     string  `json:"state"`
	// CaptureEnded: the capture ended while the setup or teardown was
	// under way (conn.Connection.CaptureEnded).
	CaptureEnded bool `json:"capture_ended,omitempty"`
	// RejectReason is set for a rejected connection.
	RejectReason *RejectJSON `json:"reject_reason,omitempty"`
	// Frames of each step.
	RequestFrame           *int `json:"request_frame"`
	ReplyFrame             *int `json:"reply_frame"`
	EstablishedFrame       *int `json:"established_frame"`
	DisconnectRequestFrame *int `json:"disconnect_request_frame"`
	DisconnectReplyFrame   *int `json:"disconnect_reply_frame"`
	// ClientPrivateData and ServerPrivateData are the pvtdata reports
	// ("cmpd-dissect pvtdata --json"), null when the message was not seen.
	ClientPrivateData *PrivateDataJSON `json:"client_private_data"`
	ServerPrivateData *PrivateDataJSON `json:"server_private_data"`
	// Negotiated is null until the server's answer was seen.
	Negotiated *pvtdata.Negotiated `json:"negotiated"`
	Traffic    TrafficJSON         `json:"traffic"`
	Steps      []StepJSON          `json:"steps"`
	// StepsDropped counts the messages beyond the ladder limit.
	StepsDropped int  `json:"steps_dropped,omitempty"`
	Evicted      bool `json:"evicted,omitempty"`
	// Findings lists the first findings of each code and severity (conn's
	// Config.MaxFindingsPerCode); FindingCounts counts all of them, with
	// the frames they span.
	Findings      []finding.Finding   `json:"findings"`
	FindingCounts []conn.FindingCount `json:"finding_counts"`
	// CMTiming, Credits, Chunks, QueuePairs and Streams are the analysis of the
	// connection's setup and traffic (conn_transport.go), left out when
	// there is nothing to say.
	CMTiming *CMTimingJSON `json:"cm_timing,omitempty"`
	Credits  *conn.Credits `json:"credits,omitempty"`
	// Chunks is left out when no answered call offered chunks.
	Chunks     *conn.ChunkTotals `json:"chunks,omitempty"`
	QueuePairs []QueuePairJSON   `json:"queue_pairs,omitempty"`
	Streams    []StreamJSON      `json:"tcp_streams,omitempty"`
	HostPairs  []HostPairJSON    `json:"host_pairs,omitempty"`
}

// PrivateDataJSON is the pvtdata report of one side with the message and
// frame that carried it.
type PrivateDataJSON struct {
	pvtdata.Report
	Message string `json:"message"`
	Frame   int    `json:"frame"`
	// Uncaptured: the capture's snap length cut the private data; the
	// report is of the octets captured, without findings (what is
	// missing is not the peer's fault).
	Uncaptured bool `json:"uncaptured,omitempty"`
}

// RejectJSON is the reason of a rejection.
type RejectJSON struct {
	Code uint16 `json:"code"`
	Name string `json:"name"`
}

// TrafficJSON counts the Sends checked in each direction.
type TrafficJSON struct {
	ToServer conn.SendCounts `json:"to_server"`
	ToClient conn.SendCounts `json:"to_client"`
}

// StepJSON is one message of the ladder.
type StepJSON struct {
	Message        string    `json:"message"`
	Frame          int       `json:"frame"`
	Time           time.Time `json:"time"`
	Direction      string    `json:"direction"`
	Retransmission bool      `json:"retransmission,omitempty"`
	Note           string    `json:"note,omitempty"`
}

func connFrameRef(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

// MarshalJSON writes the report; of private data the capture cut it writes
// "effective" and "readers" as null: what a receiver acts on depends on
// octets that were not captured, and the defaults the reading falls back to
// would read as the peer's offer.
func (j PrivateDataJSON) MarshalJSON() ([]byte, error) {
	type report PrivateDataJSON // without this method
	if !j.Uncaptured {
		return json.Marshal(report(j))
	}
	return json.Marshal(struct {
		report
		Effective *pvtdata.Effective     `json:"effective"`
		Readers   []pvtdata.ReaderResult `json:"readers"`
	}{report: report(j)})
}

func privateDataJSON(pd *conn.PrivateData) *PrivateDataJSON {
	if pd == nil {
		return nil
	}
	j := &PrivateDataJSON{Report: pd.Report(), Message: pd.Message, Frame: pd.Frame, Uncaptured: pd.Uncaptured}
	if pd.Uncaptured {
		j.Findings = nil
	}
	return j
}

// NewConnJSON builds the JSON object of c.
func NewConnJSON(c *conn.Connection) ConnJSON {
	j := ConnJSON{
		ID: c.ID, Kind: c.Kind.String(), Transport: c.Transport.String(),
		Client: c.Client.String(), Server: c.Server.String(), Service: c.Service(),
		State:                  c.State.String(),
		CaptureEnded:           c.CaptureEnded,
		RequestFrame:           connFrameRef(c.RequestFrame),
		ReplyFrame:             connFrameRef(c.ReplyFrame),
		EstablishedFrame:       connFrameRef(c.EstablishedFrame),
		DisconnectRequestFrame: connFrameRef(c.DisconnectRequestFrame),
		DisconnectReplyFrame:   connFrameRef(c.DisconnectReplyFrame),
		ClientPrivateData:      privateDataJSON(c.ClientData),
		ServerPrivateData:      privateDataJSON(c.ServerData),
		Traffic:                TrafficJSON{ToServer: c.ToServer, ToClient: c.ToClient},
		Steps:                  make([]StepJSON, 0, c.NumSteps()),
		Evicted:                c.Evicted,
		StepsDropped:           c.StepsDropped,
		Findings:               c.Findings(),
		FindingCounts:          append([]conn.FindingCount{}, c.FindingCounts...),
	}
	if j.Findings == nil {
		j.Findings = []finding.Finding{}
	}
	if c.HasServiceID {
		s := fmt.Sprintf("0x%016x", c.ServiceID)
		j.ServiceID = &s
	}
	if c.Transport != conn.IWARP {
		if c.ClientQPN != 0 || (c.RequestFrame != 0 && !c.RequestCut && c.Kind != conn.KindSIDR) {
			q := c.ClientQPN
			j.ClientQPN = &q
		}
		if c.ServerQPN != 0 || (c.ReplyFrame != 0 && !c.ReplyCut && c.State != conn.StateRejected) {
			q := c.ServerQPN
			j.ServerQPN = &q
		}
	}
	if c.State == conn.StateRejected && !c.RejectCut {
		j.RejectReason = &RejectJSON{Code: c.RejectReason, Name: c.RejectReasonName}
	}
	if negotiates(c) && c.NegotiationSeen() {
		n := c.Negotiated
		j.Negotiated = &n
	}
	for i := range c.NumSteps() {
		s := c.Step(i)
		j.Steps = append(j.Steps, StepJSON{Message: s.Message, Frame: s.Frame, Time: s.Time.UTC(),
			Direction: s.Direction(), Retransmission: s.Retransmission, Note: s.Note})
	}
	addAnalysisJSON(&j, c)
	return j
}

// WriteConnsJSON writes one JSON object per connection per line.
func WriteConnsJSON(w io.Writer, cs []*conn.Connection) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for _, c := range cs {
		if err := enc.Encode(NewConnJSON(c)); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// PrivateDataSummary renders one side's private data in a few words:
// "v1 R=1 4096/4096", "v1 R=0 4096/4096 @4", "empty", "zero", "nvmeof",
// "no RFC 8797 message (16 octets)", "-" when the message was not seen.
func PrivateDataSummary(pd *conn.PrivateData) string {
	return string(appendPrivateDataSummary(nil, pd))
}

func appendPrivateDataSummary(b []byte, pd *conn.PrivateData) []byte {
	if pd == nil {
		return append(b, '-')
	}
	if pd.Uncaptured {
		return append(b, "not captured"...)
	}
	r := &pd.Read
	if !r.Found {
		if f := pd.Format(); f != "rpcrdma-v1" {
			return append(b, f...)
		}
		// The NFS/RDMA port, but no RFC 8797 message in the data.
		b = strconv.AppendInt(append(b, "no RFC 8797 message ("...), int64(len(pd.ULP())), 10)
		return append(b, " octets)"...)
	}
	m := r.Message
	b = strconv.AppendUint(append(b, 'v'), uint64(m.Version), 10)
	b = strconv.AppendInt(append(b, " R="...), int64(connBit(m.RemoteInvalidation())), 10)
	b = strconv.AppendInt(append(b, ' '), int64(m.SendBytes()), 10)
	b = strconv.AppendInt(append(b, '/'), int64(m.ReceiveBytes()), 10)
	if r.Offset != 0 {
		b = strconv.AppendInt(append(b, " @"...), int64(r.Offset), 10)
	}
	if !r.Valid {
		b = append(b, " (ignored)"...)
	}
	if pd.Divergent {
		b = append(b, " (readers differ)"...)
	}
	return b
}

func connBit(b bool) int {
	if b {
		return 1
	}
	return 0
}

// negotiates reports a connection whose RFC 8797 result is shown: one not
// known to carry another ULP (those show only their private data) whose
// server answered and accepted.
func negotiates(c *conn.Connection) bool {
	return c.Replied() && c.State != conn.StateRejected && c.Kind != conn.KindSIDR && !c.OtherULP()
}

// NegotiatedSummary renders "4096/4096 RI=no" (client→server / server→client
// inline thresholds, remote invalidation), "-" before the reply.
func NegotiatedSummary(c *conn.Connection) string {
	return string(appendNegotiatedSummary(nil, c))
}

func appendNegotiatedSummary(b []byte, c *conn.Connection) []byte {
	if !negotiates(c) {
		return append(b, '-')
	}
	if !c.NegotiationSeen() {
		return append(b, "not captured"...)
	}
	n := c.Negotiated
	ri := "no"
	if n.RemoteInvalidation {
		ri = "yes"
	}
	b = strconv.AppendInt(b, int64(n.ClientToServerInline), 10)
	b = strconv.AppendInt(append(b, '/'), int64(n.ServerToClientInline), 10)
	return append(append(b, " RI="...), ri...)
}

// FindingCounts renders "2 error, 1 warning" or "-".
func FindingCounts(fs []finding.Finding) string {
	var n [4]int
	for _, f := range fs {
		if int(f.Severity) < len(n) {
			n[f.Severity]++
		}
	}
	return string(appendSeverityText(nil, n))
}

// ConnFindingCounts renders "2 error, 1 warning" or "-" for every finding
// of c, listed or only counted.
func ConnFindingCounts(c *conn.Connection) string {
	return string(appendConnFindingCounts(nil, c))
}

func appendConnFindingCounts(b []byte, c *conn.Connection) []byte {
	var n [4]int
	for _, fc := range c.FindingCounts {
		if int(fc.Severity) < len(n) {
			n[fc.Severity] += fc.Count
		}
	}
	return appendSeverityText(b, n)
}

func appendSeverityText(b []byte, n [4]int) []byte {
	start := len(b)
	for _, s := range [...]finding.Severity{finding.SeverityError, finding.SeverityWarning, finding.SeverityInfo} {
		if n[s] > 0 {
			if len(b) > start {
				b = append(b, ", "...)
			}
			b = strconv.AppendInt(b, int64(n[s]), 10)
			b = append(append(b, ' '), s.String()...)
		}
	}
	if len(b) == start {
		b = append(b, '-')
	}
	return b
}

// appendConnQPs appends the QPNs "0x000100/0x000101" ("?" unknown, "-"
// on iWARP).
func appendConnQPs(b []byte, c *conn.Connection) []byte {
	if c.Transport == conn.IWARP {
		return append(b, '-')
	}
	b = appendQPN(b, c.ClientQPN, c.ClientQPN != 0 || (c.RequestFrame != 0 && !c.RequestCut && c.Kind != conn.KindSIDR))
	return appendQPN(append(b, '/'), c.ServerQPN, c.ServerQPN != 0)
}

// appendQPN appends "0x%06x", or "?" when the QPN is not known.
func appendQPN(b []byte, v uint32, known bool) []byte {
	if !known {
		return append(b, '?')
	}
	var d [8]byte
	digits := strconv.AppendUint(d[:0], uint64(v), 16)
	b = append(b, "0x"...)
	for i := len(digits); i < 6; i++ {
		b = append(b, '0')
	}
	return append(b, digits...)
}

// appendConnFrames appends the REQ and REP frames "1/2" ("-" not seen).
func appendConnFrames(b []byte, c *conn.Connection) []byte {
	return appendFrame(append(appendFrame(b, c.RequestFrame), '/'), c.ReplyFrame)
}

func appendFrame(b []byte, n int) []byte {
	if n == 0 {
		return append(b, '-')
	}
	return strconv.AppendInt(b, int64(n), 10)
}

// connsHeader is the table's header row.
var connsHeader = [connsCols]string{"#", "Transport", "Client", "Server", "Service", "QPN c/s", "State", "REQ/REP frame",
	"Client PD", "Server PD", "Negotiated c→s/s→c", "Findings"}

const connsCols = 12

// connRow builds the cells of one table row in a buffer reused from row to
// row: ends[i] is where cell i ends in buf.
type connRow struct {
	buf  []byte
	ends [connsCols]int
}

func (r *connRow) build(c *conn.Connection) {
	b := strconv.AppendInt(r.buf[:0], int64(c.ID), 10)
	if c.Kind == conn.KindSIDR {
		b = append(b, " SIDR"...)
	}
	r.ends[0] = len(b)
	b = append(b, c.Transport.String()...)
	r.ends[1] = len(b)
	b = c.Client.AppendTo(b)
	r.ends[2] = len(b)
	b = c.Server.AppendTo(b)
	r.ends[3] = len(b)
	if c.HasServiceID {
		b = ibcm.AppendDescription(b, c.ServiceID)
	} else {
		b = append(b, '-')
	}
	r.ends[4] = len(b)
	b = appendConnQPs(b, c)
	r.ends[5] = len(b)
	b = c.AppendStateText(b)
	r.ends[6] = len(b)
	b = appendConnFrames(b, c)
	r.ends[7] = len(b)
	b = appendPrivateDataSummary(b, c.ClientData)
	r.ends[8] = len(b)
	b = appendPrivateDataSummary(b, c.ServerData)
	r.ends[9] = len(b)
	b = appendNegotiatedSummary(b, c)
	r.ends[10] = len(b)
	b = appendConnFindingCounts(b, c)
	r.ends[11] = len(b)
	r.buf = b
}

// cell returns cell i of the row built last.
func (r *connRow) cell(i int) []byte {
	start := 0
	if i > 0 {
		start = r.ends[i-1]
	}
	return r.buf[start:r.ends[i]]
}

// cellWidth is displayWidth of the cell: its length when it is printable
// ASCII (as every cell usually is), without making a string of it.
func cellWidth(b []byte) int {
	for _, c := range b {
		if c < 0x20 || c >= 0x7f {
			return displayWidth(string(b))
		}
	}
	return len(b)
}

// cells sets out to the cells of the row built last, sliced from one
// string of the row.
func (r *connRow) cells(out []string) {
	s := string(r.buf)
	start := 0
	for i := range out {
		out[i] = s[start:r.ends[i]]
		start = r.ends[i]
	}
}

// WriteConnsTable writes one row per connection, in a box-drawn table
// whose columns are as wide as their widest cell. The rows are built
// twice in one reused buffer: first to measure the columns, then to draw
// them, one row at a time; only the row being drawn is held.
func WriteConnsTable(w io.Writer, cs []*conn.Connection) error {
	var row connRow
	widths := make([]int, connsCols)
	for i, h := range connsHeader {
		widths[i] = displayWidth(h) + 2
	}
	for _, c := range cs {
		row.build(c)
		for i := range widths {
			widths[i] = max(widths[i], cellWidth(row.cell(i))+2)
		}
	}
	t := newBoxTable(w, widths, false)
	t.header(connsHeader[:])
	cells := make([]string, connsCols)
	for _, c := range cs {
		row.build(c)
		row.cells(cells)
		t.row(cells)
	}
	return t.close()
}

// WriteConnsLadder writes each connection's ladder: its messages with
// frame, time since the connection's first message and direction, each
// followed by the findings raised at that frame; findings of the traffic
// that follows appear in frame order between the steps.
func WriteConnsLadder(w io.Writer, cs []*conn.Connection) error {
	bw := bufio.NewWriter(w)
	for i, c := range cs {
		if i > 0 {
			bw.WriteString("\n")
		}
		writeLadder(bw, c)
	}
	return bw.Flush()
}

func writeLadder(w *bufio.Writer, c *conn.Connection) {
	svc := c.Service()
	if svc != "" {
		svc = "  " + svc
	}
	kind := ""
	if c.Kind == conn.KindSIDR {
		kind = " (SIDR)"
	}
	fmt.Fprintf(w, "Connection %d%s  %s  %s → %s%s  %s\n", c.ID, kind, c.Transport, c.Client, c.Server, svc, c.StateText())
	if c.Transport != conn.IWARP {
		fmt.Fprintf(w, "  QPN client %s server %s, comm ID client %s server %s\n",
			connQP(c.ClientQPN), connQP(c.ServerQPN), connCommID(c.ClientCommID, c.RequestCut), connCommID(c.ServerCommID, c.ReplyCut))
	}
	fmt.Fprintf(w, "  %-8s %-12s %-17s %s\n", "frame", "time", "direction", "message")
	// Findings in frame order; each is printed under the last step at or
	// before its frame, the last listed of a kind with how many more there
	// are.
	fs := c.Findings()
	sortConnFindings(fs)
	more := ladderMore{c: c}
	next := 0
	for i := range c.NumSteps() {
		s := c.Step(i)
		// Findings before this step that belong to no step (traffic).
		for next < len(fs) && fs[next].Frame != 0 && fs[next].Frame < s.Frame {
			more.write(w, "  ", fs[next])
			next++
		}
		arrow := "client → server"
		if !s.FromClient {
			arrow = "server → client"
		}
		msg := s.Message
		if s.Retransmission {
			msg += " (retransmission)"
		}
		if s.Note != "" {
			msg += "  " + s.Note
		}
		pd := stepData(c, s)
		if pd != nil {
			msg += "  pd: " + PrivateDataSummary(pd)
		}
		fmt.Fprintf(w, "  %-8d %-12s %-17s %s\n", s.Frame, connRelTime(s.Time.Sub(c.FirstTime)), arrow, msg)
		if pd != nil {
			fmt.Fprintf(w, "      %s\n", PrivateDataDetail(pd))
		}
		for next < len(fs) && fs[next].Frame == s.Frame {
			more.write(w, "      ", fs[next])
			next++
		}
	}
	if c.StepsDropped > 0 {
		fmt.Fprintf(w, "  … %d more messages not listed (ladder limit)\n", c.StepsDropped)
	}
	for ; next < len(fs); next++ {
		more.write(w, "  ", fs[next])
	}
	if negotiates(c) && !c.NegotiationSeen() {
		fmt.Fprintf(w, "  negotiated: not known, private data not captured (snap length)\n")
	} else if negotiates(c) {
		n := c.Negotiated
		fmt.Fprintf(w, "  negotiated: client → server inline %d, server → client inline %d, remote invalidation %s\n",
			n.ClientToServerInline, n.ServerToClientInline, connYesNo(n.RemoteInvalidation))
	}
	if c.ToServer.Sends+c.ToClient.Sends > 0 {
		fmt.Fprintf(w, "  traffic: client → server %d Sends (%d RPC-over-RDMA, largest %d), server → client %d Sends (%d RPC-over-RDMA, largest %d, %d with Invalidate)\n",
			c.ToServer.Sends, c.ToServer.RPCRDMA, c.ToServer.MaxLength,
			c.ToClient.Sends, c.ToClient.RPCRDMA, c.ToClient.MaxLength, c.ToClient.Invalidate)
	}
	writeLadderAnalysis(w, c)
}

func connQP(q uint32) string {
	if q == 0 {
		return "?"
	}
	return fmt.Sprintf("0x%06x", q)
}

// connCommID shows a comm ID, "?" when the message that carried it had
// its fixed fields cut by the snap length (cut) and no other showed it.
func connCommID(id uint32, cut bool) string {
	if id == 0 && cut {
		return "?"
	}
	return fmt.Sprintf("0x%08x", id)
}

func connYesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// stepData returns the private data carried by step s when it is the
// side's request or reply (not a retransmission).
func stepData(c *conn.Connection, s conn.Step) *conn.PrivateData {
	if s.Retransmission {
		return nil
	}
	for _, pd := range []*conn.PrivateData{c.ClientData, c.ServerData} {
		if pd != nil && pd.Frame == s.Frame && pd.Message == s.Message {
			return pd
		}
	}
	return nil
}

// PrivateDataDetail says where the ULP data sits and what it holds:
// "92 octets of private data; ULP data at octet 36, after the rdma_cm IP
// header: f6 ab 0e 18 01 01 03 03 (+48 zero octets); RFC 8797 message at
// ULP offset 0".
func PrivateDataDetail(pd *conn.PrivateData) string {
	if pd.Uncaptured && len(pd.Bytes) == 0 {
		return "private data not captured (snap length)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d octets of private data", len(pd.Bytes))
	if pd.Uncaptured {
		b.WriteString(" captured (the rest cut by the snap length)")
	}
	fmt.Fprintf(&b, "; ULP data at octet %d", pd.ULPOffset)
	switch {
	case pd.ULPOffset == 36:
		b.WriteString(", after the rdma_cm IP header")
	case pd.ULPOffset == 4:
		fmt.Fprintf(&b, ", after the MPA v2 IRD/ORD words % x", pd.Bytes[:4])
	}
	ulp := pd.ULP()
	// Show the octets up to the last non-zero one (IB CM pads with zeros).
	end := len(ulp)
	for end > 0 && ulp[end-1] == 0 {
		end--
	}
	shown := min(end, 32)
	if shown == 0 {
		b.WriteString(": all zero")
	} else {
		fmt.Fprintf(&b, ": % x", ulp[:shown])
		if end > shown {
			fmt.Fprintf(&b, " … (%d more)", end-shown)
		}
		if pad := len(ulp) - end; pad > 0 {
			fmt.Fprintf(&b, " (+%d zero octets)", pad)
		}
	}
	if r := &pd.Read; r.Found {
		fmt.Fprintf(&b, "; RFC 8797 message at ULP offset %d", r.Offset)
	}
	return b.String()
}

// ladderMore writes a connection's listed findings and, after the last
// listed one of a code and severity, how many more were only counted:
// "… and 20 more like this (frames 405–1965)".
type ladderMore struct {
	c *conn.Connection
	// seen counts the listed findings written, per FindingCounts entry.
	seen []int
}

func (m *ladderMore) write(w *bufio.Writer, indent string, f finding.Finding) {
	writeLadderFinding(w, indent, f)
	for i := range m.c.FindingCounts {
		fc := &m.c.FindingCounts[i]
		if fc.Code != f.Code || fc.Severity != f.Severity {
			continue
		}
		if m.seen == nil {
			m.seen = make([]int, len(m.c.FindingCounts))
		}
		m.seen[i]++
		if m.seen[i] == fc.Listed && fc.Unlisted() > 0 {
			fmt.Fprintf(w, "%s  … and %d more like this%s\n", indent, fc.Unlisted(), fc.UnlistedSpan())
		}
		return
	}
}

func writeLadderFinding(w *bufio.Writer, indent string, f finding.Finding) {
	where := ""
	if f.Frame != 0 {
		where = fmt.Sprintf("frame %d: ", f.Frame)
	}
	fmt.Fprintf(w, "%s! %s%s\n", indent, where, f.String())
}

func connRelTime(d time.Duration) string {
	return fmt.Sprintf("%.6f", d.Seconds())
}

func sortConnFindings(fs []finding.Finding) {
	key := func(f finding.Finding) int {
		if f.Frame == 0 {
			return int(^uint(0) >> 1) // not tied to a frame: last
		}
		return f.Frame
	}
	// Stable insertion sort: findings arrive nearly in order.
	for i := 1; i < len(fs); i++ {
		for j := i; j > 0 && key(fs[j]) < key(fs[j-1]); j-- {
			fs[j], fs[j-1] = fs[j-1], fs[j]
		}
	}
}
