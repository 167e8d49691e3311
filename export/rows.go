package export

import (
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/conn"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/view"
)

// SchemaVersion is written in every row's schema_version column. It goes
// up when a column is removed, renamed or changes meaning or type (adding a
// column does not change it), so a query over exports of several versions
// can tell them apart.
const SchemaVersion = 1

// The rows of each table. Column names are the keys of "conns --json" and
// of the findings in "-T json" where the value is the same; packet fields
// are the tool's field names with "." written "_" (bth.opcode is
// bth_opcode), as engines read a dot as a struct member. Integers are
// signed 64-bit (Spark and Trino have no unsigned types); a value that is
// not known is null. The capture is not a column of the Parquet files: it
// is the capture=NAME directory (Hive partitioning), which engines turn
// into a column; NDJSON documents carry it as a field.

// Connection is one row of the connections table.
type Connection struct {
	SchemaVersion int32  `parquet:"schema_version" json:"schema_version"`
	Capture       string `parquet:"-" json:"capture"`
	ID            int64  `parquet:"id" json:"id"`
	Kind          string `parquet:"kind" json:"kind"`
	Transport     string `parquet:"transport" json:"transport"`
	Client        string `parquet:"client" json:"client"`
	Server        string `parquet:"server" json:"server"`
	// ServiceID is hex text as in conns --json ("0x0000000001064e51").
	ServiceID *string `parquet:"service_id,optional" json:"service_id"`
	Service   string  `parquet:"service" json:"service"`
	ClientQPN *int64  `parquet:"client_qpn,optional" json:"client_qpn"`
	ServerQPN *int64  `parquet:"server_qpn,optional" json:"server_qpn"`
	State     string  `parquet:"state" json:"state"`
	// RejectReason and RejectReasonName are conns --json's reject_reason
	// object (code, name), flat.
	RejectReason           *int64  `parquet:"reject_reason,optional" json:"reject_reason"`
	RejectReasonName       *string `parquet:"reject_reason_name,optional" json:"reject_reason_name"`
	RequestFrame           *int64  `parquet:"request_frame,optional" json:"request_frame"`
	ReplyFrame             *int64  `parquet:"reply_frame,optional" json:"reply_frame"`
	EstablishedFrame       *int64  `parquet:"established_frame,optional" json:"established_frame"`
	DisconnectRequestFrame *int64  `parquet:"disconnect_request_frame,optional" json:"disconnect_request_frame"`
	DisconnectReplyFrame   *int64  `parquet:"disconnect_reply_frame,optional" json:"disconnect_reply_frame"`
	// FirstTime and LastTime bound the connection's messages and traffic.
	FirstTime         time.Time    `parquet:"first_time,timestamp(microsecond)" json:"first_time"`
	LastTime          time.Time    `parquet:"last_time,timestamp(microsecond)" json:"last_time"`
	ClientPrivateData *PrivateData `parquet:"client_private_data,optional" json:"client_private_data"`
	ServerPrivateData *PrivateData `parquet:"server_private_data,optional" json:"server_private_data"`
	Negotiated        *Negotiated  `parquet:"negotiated,optional" json:"negotiated"`
	Traffic           Traffic      `parquet:"traffic" json:"traffic"`
	StepsDropped      int64        `parquet:"steps_dropped" json:"steps_dropped"`
	Evicted           bool         `parquet:"evicted" json:"evicted"`
	// Findings counts every finding raised on the connection (listed in
	// conns --json or only counted); the findings table has the listed
	// ones, FindingCounts the per-code counts of conns --json.
	Findings      int64          `parquet:"findings" json:"findings"`
	FindingCounts []FindingCount `parquet:"finding_counts,list" json:"finding_counts"`
	// CMTiming and Credits are conns --json's cm_timing and credits, null
	// when it leaves them out (nothing to say).
	CMTiming *CMTiming `parquet:"cm_timing,optional" json:"cm_timing"`
	Credits  *Credits  `parquet:"credits,optional" json:"credits"`
}

// CMTiming is conns --json's cm_timing object.
type CMTiming struct {
	Request             string   `parquet:"request" json:"request"`
	Reply               string   `parquet:"reply" json:"reply"`
	RequestToReplyMS    *float64 `parquet:"request_to_reply_ms,optional" json:"request_to_reply_ms"`
	ReplyToReadyMS      *float64 `parquet:"reply_to_ready_ms,optional" json:"reply_to_ready_ms"`
	DisconnectToReplyMS *float64 `parquet:"disconnect_to_reply_ms,optional" json:"disconnect_to_reply_ms"`
	MRAs                int64    `parquet:"mras" json:"mras"`
	RequestRetries      int64    `parquet:"request_retries" json:"request_retries"`
	ReplyRetries        int64    `parquet:"reply_retries" json:"reply_retries"`
}

// Credits is conns --json's credits object (RFC 8166 §3.3).
type Credits struct {
	Granted         int64 `parquet:"granted" json:"granted"`
	Grants          int64 `parquet:"grants" json:"grants"`
	MinGranted      int64 `parquet:"min_granted" json:"min_granted"`
	MaxGranted      int64 `parquet:"max_granted" json:"max_granted"`
	PeakOutstanding int64 `parquet:"peak_outstanding" json:"peak_outstanding"`
	GrantedAtPeak   int64 `parquet:"granted_at_peak" json:"granted_at_peak"`
	Exceeded        int64 `parquet:"exceeded" json:"exceeded"`
}

// QueuePair is one row of the queue_pairs table: what the transport
// analysis counted on one of a connection's queue pairs (conns --json's
// queue_pairs elements).
type QueuePair struct {
	SchemaVersion   int32      `parquet:"schema_version" json:"schema_version"`
	Capture         string     `parquet:"-" json:"capture"`
	Connection      int64      `parquet:"connection" json:"connection"`
	Side            string     `parquet:"side" json:"side"`
	QPN             int64      `parquet:"qpn" json:"qpn"`
	Packets         int64      `parquet:"packets" json:"packets"`
	Bytes           int64      `parquet:"bytes" json:"bytes"`
	Requests        int64      `parquet:"requests" json:"requests"`
	Responses       int64      `parquet:"responses" json:"responses"`
	PSNGaps         int64      `parquet:"psn_gaps" json:"psn_gaps"`
	Missing         int64      `parquet:"psns_missing" json:"psns_missing"`
	CaptureLoss     int64      `parquet:"capture_loss" json:"capture_loss"`
	Retransmissions int64      `parquet:"retransmissions" json:"retransmissions"`
	RNRNAKs         int64      `parquet:"rnr_naks" json:"rnr_naks"`
	MSNRegress      int64      `parquet:"msn_regress" json:"msn_regress"`
	ECNCE           int64      `parquet:"ecn_ce" json:"ecn_ce"`
	CNPs            int64      `parquet:"cnps" json:"cnps"`
	FECN            int64      `parquet:"fecn" json:"fecn"`
	BECN            int64      `parquet:"becn" json:"becn"`
	NAKs            []NAKCount `parquet:"naks,list" json:"naks"`
	AckLatency      Latency    `parquet:"ack_latency" json:"ack_latency"`
}

// NAKCount is one NAK code's count.
type NAKCount struct {
	Code  int64  `parquet:"code" json:"code"`
	Name  string `parquet:"name" json:"name"`
	Count int64  `parquet:"count" json:"count"`
}

// Latency is a latency's samples and min/avg/max in ms (null without
// samples).
type Latency struct {
	Samples int64    `parquet:"samples" json:"samples"`
	MinMS   *float64 `parquet:"min_ms,optional" json:"min_ms"`
	AvgMS   *float64 `parquet:"avg_ms,optional" json:"avg_ms"`
	MaxMS   *float64 `parquet:"max_ms,optional" json:"max_ms"`
}

// PrivateData is the summary of one side's private data (the scalar keys
// of conns --json's client_private_data / server_private_data).
type PrivateData struct {
	Message            string `parquet:"message" json:"message"`
	Frame              int64  `parquet:"frame" json:"frame"`
	Mode               string `parquet:"mode" json:"mode"`
	ULP                string `parquet:"ulp" json:"ulp"`
	ULPOffset          int64  `parquet:"ulp_offset" json:"ulp_offset"`
	Length             int64  `parquet:"length" json:"length"`
	Hex                string `parquet:"hex" json:"hex"`
	Found              bool   `parquet:"found" json:"found"`
	Offset             int64  `parquet:"offset" json:"offset"`
	Valid              bool   `parquet:"valid" json:"valid"`
	Version            int64  `parquet:"version" json:"version"`
	RemoteInvalidation bool   `parquet:"remote_invalidation" json:"remote_invalidation"`
	SendSize           int64  `parquet:"send_size" json:"send_size"`
	ReceiveSize        int64  `parquet:"receive_size" json:"receive_size"`
}

// Negotiated is conns --json's negotiated object.
type Negotiated struct {
	ClientToServerInline int64 `parquet:"client_to_server_inline" json:"client_to_server_inline"`
	ServerToClientInline int64 `parquet:"server_to_client_inline" json:"server_to_client_inline"`
	RemoteInvalidation   bool  `parquet:"remote_invalidation" json:"remote_invalidation"`
}

// Traffic is conns --json's traffic object.
type Traffic struct {
	ToServer SendCounts `parquet:"to_server" json:"to_server"`
	ToClient SendCounts `parquet:"to_client" json:"to_client"`
}

// SendCounts is one direction of Traffic.
type SendCounts struct {
	Sends             int64 `parquet:"sends" json:"sends"`
	RPCRDMA           int64 `parquet:"rpcrdma" json:"rpcrdma"`
	Invalidate        int64 `parquet:"invalidate" json:"invalidate"`
	InvalidateChecked int64 `parquet:"invalidate_checked" json:"invalidate_checked"`
	MaxLength         int64 `parquet:"max_length" json:"max_length"`
}

// FindingCount is one element of conns --json's finding_counts.
type FindingCount struct {
	Code       string `parquet:"code" json:"code"`
	Severity   string `parquet:"severity" json:"severity"`
	Count      int64  `parquet:"count" json:"count"`
	Listed     int64  `parquet:"listed" json:"listed"`
	FirstFrame *int64 `parquet:"first_frame,optional" json:"first_frame"`
	LastFrame  *int64 `parquet:"last_frame,optional" json:"last_frame"`
}

// Finding is one row of the findings table.
type Finding struct {
	SchemaVersion int32  `parquet:"schema_version" json:"schema_version"`
	Capture       string `parquet:"-" json:"capture"`
	// Frame is null for a finding tied to no frame (the end of the input).
	Frame    *int64 `parquet:"frame,optional" json:"frame"`
	Code     string `parquet:"code" json:"code"`
	Severity string `parquet:"severity" json:"severity"`
	Section  string `parquet:"section" json:"section"`
	Layer    string `parquet:"layer" json:"layer"`
	// Offset is from the start of the frame, null when not meaningful.
	Offset  *int64 `parquet:"offset,optional" json:"offset"`
	Message string `parquet:"message" json:"message"`
	// Connection is the id of the connection (the connections table's id)
	// the finding belongs to, null when none is known.
	Connection *int64 `parquet:"connection,optional" json:"connection"`
	// Origin is "frame" for a finding the dissector raised on a frame (the
	// findings of -T json, all of them) and "connection" for one the
	// connection analysis raised (conn's checks, listed as in conns --json).
	Origin string `parquet:"origin" json:"origin"`
}

// RPC is one row of the rpc table: an RPC call and its reply. A reply
// whose call was not captured has a row with the call columns null; a call
// never answered, the reply columns null.
type RPC struct {
	SchemaVersion int32  `parquet:"schema_version" json:"schema_version"`
	Capture       string `parquet:"-" json:"capture"`
	XID           int64  `parquet:"xid" json:"xid"`
	// Program, Version and Procedure are the call's (rpc.program,
	// rpc.programversion, rpc.procedure).
	Program   *int64     `parquet:"program,optional" json:"program"`
	Version   *int64     `parquet:"version,optional" json:"version"`
	Procedure *int64     `parquet:"procedure,optional" json:"procedure"`
	CallFrame *int64     `parquet:"call_frame,optional" json:"call_frame"`
	CallTime  *time.Time `parquet:"call_time,optional,timestamp(microsecond)" json:"call_time"`
	// Client sent the call, Server answered it (addresses as conns shows
	// them).
	Client     string     `parquet:"client" json:"client"`
	Server     string     `parquet:"server" json:"server"`
	ReplyFrame *int64     `parquet:"reply_frame,optional" json:"reply_frame"`
	ReplyTime  *time.Time `parquet:"reply_time,optional,timestamp(microsecond)" json:"reply_time"`
	// ReplyMS is the reply time less the call time, in milliseconds.
	ReplyMS *float64 `parquet:"reply_ms,optional" json:"reply_ms"`
	// ReplyKind is "rpc" for an RPC reply decoded from a Send,
	// "rdma_nomsg" for an RPC-over-RDMA RDMA_NOMSG (the reply went by RDMA
	// Write into the reply chunk) and "rdma_error" for RDMA_ERROR; null
	// when no reply was seen.
	ReplyKind *string `parquet:"reply_kind,optional" json:"reply_kind"`
	// ReplyStat and AcceptStat are rpc.replystat and rpc.state_accept of an
	// RPC reply.
	ReplyStat  *int64 `parquet:"reply_stat,optional" json:"reply_stat"`
	AcceptStat *int64 `parquet:"accept_stat,optional" json:"accept_stat"`
	Connection *int64 `parquet:"connection,optional" json:"connection"`
}

// Packet is one row of the packets table (with --packets).
type Packet struct {
	SchemaVersion int32     `parquet:"schema_version" json:"schema_version"`
	Capture       string    `parquet:"-" json:"capture"`
	Frame         int64     `parquet:"frame_number" json:"frame_number"`
	Time          time.Time `parquet:"frame_time,timestamp(microsecond)" json:"frame_time"`
	Len           int64     `parquet:"frame_len" json:"frame_len"`
	CapLen        int64     `parquet:"frame_cap_len" json:"frame_cap_len"`
	Protocols     string    `parquet:"frame_protocols" json:"frame_protocols"`
	// Src and Dst are the IP addresses, else the GIDs, else "lid 0x…".
	Src            *string `parquet:"src,optional" json:"src"`
	Dst            *string `parquet:"dst,optional" json:"dst"`
	SrcPort        *int64  `parquet:"srcport,optional" json:"srcport"`
	DstPort        *int64  `parquet:"dstport,optional" json:"dstport"`
	BTHOpcode      *int64  `parquet:"bth_opcode,optional" json:"bth_opcode"`
	BTHDestQP      *int64  `parquet:"bth_destqp,optional" json:"bth_destqp"`
	BTHPSN         *int64  `parquet:"bth_psn,optional" json:"bth_psn"`
	CMAttributeID  *int64  `parquet:"cm_attribute_id,optional" json:"cm_attribute_id"`
	RDMAPOpcode    *int64  `parquet:"rdmap_opcode,optional" json:"rdmap_opcode"`
	RPCRDMAXID     *int64  `parquet:"rpcrdma_xid,optional" json:"rpcrdma_xid"`
	RPCRDMAMsgType *int64  `parquet:"rpcrdma_msg_type,optional" json:"rpcrdma_msg_type"`
	RPCXID         *int64  `parquet:"rpc_xid,optional" json:"rpc_xid"`
	RPCMsgType     *int64  `parquet:"rpc_msgtyp,optional" json:"rpc_msgtyp"`
	RPCProgram     *int64  `parquet:"rpc_program,optional" json:"rpc_program"`
	RPCProcedure   *int64  `parquet:"rpc_procedure,optional" json:"rpc_procedure"`
	// Findings counts the frame's findings (the findings table has them).
	Findings   int64  `parquet:"findings" json:"findings"`
	Connection *int64 `parquet:"connection,optional" json:"connection"`
}

func i64(v int64) *int64 { return &v }

// frameRef is a frame number, null for 0 (not tied to a frame).
func frameRef(n int) *int64 {
	if n == 0 {
		return nil
	}
	return i64(int64(n))
}

func intRef(p *int) *int64 {
	if p == nil {
		return nil
	}
	return i64(int64(*p))
}

func uint32Ref(p *uint32) *int64 {
	if p == nil {
		return nil
	}
	return i64(int64(*p))
}

// connectionRow builds the row of c from conns --json's object (j is
// view.NewConnJSON(c)), so the two agree on every value they share.
func connectionRow(capture string, c *conn.Connection, j *view.ConnJSON) Connection {
	r := Connection{
		SchemaVersion: SchemaVersion, Capture: capture,
		ID: int64(j.ID), Kind: j.Kind, Transport: j.Transport, Client: j.Client, Server: j.Server,
		ServiceID: j.ServiceID, Service: j.Service,
		ClientQPN: uint32Ref(j.ClientQPN), ServerQPN: uint32Ref(j.ServerQPN),
		State:                  j.State,
		RequestFrame:           intRef(j.RequestFrame),
		ReplyFrame:             intRef(j.ReplyFrame),
		EstablishedFrame:       intRef(j.EstablishedFrame),
		DisconnectRequestFrame: intRef(j.DisconnectRequestFrame),
		DisconnectReplyFrame:   intRef(j.DisconnectReplyFrame),
		FirstTime:              c.FirstTime.UTC(),
		LastTime:               c.LastTime.UTC(),
		ClientPrivateData:      privateDataRow(j.ClientPrivateData),
		ServerPrivateData:      privateDataRow(j.ServerPrivateData),
		Traffic:                Traffic{ToServer: sendCountsRow(j.Traffic.ToServer), ToClient: sendCountsRow(j.Traffic.ToClient)},
		StepsDropped:           int64(j.StepsDropped),
		Evicted:                j.Evicted,
		FindingCounts:          make([]FindingCount, 0, len(j.FindingCounts)),
	}
	if j.RejectReason != nil {
		r.RejectReason = i64(int64(j.RejectReason.Code))
		name := j.RejectReason.Name
		r.RejectReasonName = &name
	}
	if n := j.Negotiated; n != nil {
		r.Negotiated = &Negotiated{ClientToServerInline: int64(n.ClientToServerInline),
			ServerToClientInline: int64(n.ServerToClientInline), RemoteInvalidation: n.RemoteInvalidation}
	}
	if t := j.CMTiming; t != nil {
		r.CMTiming = &CMTiming{Request: t.Request, Reply: t.Reply, RequestToReplyMS: t.RequestToReplyMS,
			ReplyToReadyMS: t.ReplyToReadyMS, DisconnectToReplyMS: t.DisconnectToReplyMS,
			MRAs: int64(t.MRAs), RequestRetries: int64(t.RequestRetries), ReplyRetries: int64(t.ReplyRetries)}
	}
	if cr := j.Credits; cr != nil {
		r.Credits = &Credits{Granted: int64(cr.Granted), Grants: int64(cr.Grants), MinGranted: int64(cr.MinGranted),
			MaxGranted: int64(cr.MaxGranted), PeakOutstanding: int64(cr.PeakOutstanding),
			GrantedAtPeak: int64(cr.GrantedAtPeak), Exceeded: int64(cr.Exceeded)}
	}
	for _, fc := range j.FindingCounts {
		r.Findings += int64(fc.Count)
		r.FindingCounts = append(r.FindingCounts, FindingCount{Code: fc.Code, Severity: fc.Severity.String(),
			Count: int64(fc.Count), Listed: int64(fc.Listed), FirstFrame: frameRef(fc.FirstFrame), LastFrame: frameRef(fc.LastFrame)})
	}
	return r
}

// queuePairRows are the rows of j's queue pairs.
func queuePairRows(capture string, j *view.ConnJSON) []QueuePair {
	out := make([]QueuePair, 0, len(j.QueuePairs))
	for _, q := range j.QueuePairs {
		r := QueuePair{SchemaVersion: SchemaVersion, Capture: capture, Connection: int64(j.ID), Side: q.Side,
			QPN: int64(q.QPN), Packets: int64(q.Packets), Bytes: int64(q.Bytes), Requests: int64(q.Requests),
			Responses: int64(q.Responses), PSNGaps: int64(q.PSNGaps), Missing: int64(q.Missing),
			CaptureLoss: int64(q.CaptureLoss), Retransmissions: int64(q.Retransmissions), RNRNAKs: int64(q.RNRNAKs),
			MSNRegress: int64(q.MSNRegress), ECNCE: int64(q.ECNCE), CNPs: int64(q.CNPs), FECN: int64(q.FECN),
			BECN: int64(q.BECN), NAKs: make([]NAKCount, 0, len(q.NAKs)),
			AckLatency: Latency{Samples: int64(q.AckLatency.Samples), MinMS: q.AckLatency.MinMS,
				AvgMS: q.AckLatency.AvgMS, MaxMS: q.AckLatency.MaxMS}}
		for _, n := range q.NAKs {
			r.NAKs = append(r.NAKs, NAKCount{Code: int64(n.Code), Name: n.Name, Count: int64(n.Count)})
		}
		out = append(out, r)
	}
	return out
}

func privateDataRow(p *view.PrivateDataJSON) *PrivateData {
	if p == nil {
		return nil
	}
	return &PrivateData{Message: p.Message, Frame: int64(p.Frame), Mode: p.Mode, ULP: p.ULP,
		ULPOffset: int64(p.ULPOffset), Length: int64(p.Length), Hex: p.Hex, Found: p.Found,
		Offset: int64(p.Offset), Valid: p.Valid, Version: int64(p.Version),
		RemoteInvalidation: p.RemoteInvalidation, SendSize: int64(p.SendSize), ReceiveSize: int64(p.ReceiveSize)}
}

func sendCountsRow(s conn.SendCounts) SendCounts {
	return SendCounts{Sends: int64(s.Sends), RPCRDMA: int64(s.RPCRDMA), Invalidate: int64(s.Invalidate),
		InvalidateChecked: int64(s.InvalidateChecked), MaxLength: int64(s.MaxLength)}
}

func findingRow(capture string, f *finding.Finding, connID int, origin string) Finding {
	r := Finding{SchemaVersion: SchemaVersion, Capture: capture, Frame: frameRef(f.Frame), Code: f.Code,
		Severity: f.Severity.String(), Section: f.Section, Layer: f.Layer, Message: f.Message,
		Connection: frameRef(connID), Origin: origin}
	if f.Offset >= 0 {
		r.Offset = i64(int64(f.Offset))
	}
	return r
}
