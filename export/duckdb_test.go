//go:build duckdb

// The export read back by a real query engine: DuckDB, through its Go
// bindings (cgo, with DuckDB's prebuilt static library). Behind the duckdb
// build tag so the tool itself stays free of cgo; "make test" runs it as
// "go test -tags duckdb ./export/...".

package export

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

// duckCaptures are real captures with findings on frames and connections,
// RPC traffic over RoCE and iWARP, rejections and reconnections.
var duckCaptures = []string{
	"live-rxe4-nfs3.pcap", "live-siw4-nfs42.pcap", "live-siw4-crc-nfs42.pcap", "live-rxe4-reconnect.pcap",
	"live-siw4-reconnect.pcap", "live-rxe4-offset.pcap", "live-siw6-offset.pcap", "live-rxe4-garbage.pcap",
	"live-siw4-reject.pcap", "live-rxe6-reject.pcap", "rxe-nfs42-rdma.pcap",
}

// buildTool builds cmpd-dissect once for the test, so the export and the
// views it is compared with are the command's own output.
func buildTool(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "cmpd-dissect")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/cmpd-dissect")
	cmd.Dir = testcap.Root()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func tool(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("cmpd-dissect %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes()
}

func jsonLines(t *testing.T, b []byte, each func(line []byte)) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		each(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// query returns the rows of q as lines of tab-separated values (NULL for
// null), in the order of the query.
func query(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		s := make([]string, len(vals))
		for i, v := range vals {
			if v == nil {
				s[i] = "NULL"
			} else {
				s[i] = fmt.Sprint(v)
			}
		}
		out = append(out, strings.Join(s, "\t"))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func nullable(v *int64) string {
	if v == nil {
		return "NULL"
	}
	return fmt.Sprint(*v)
}

func TestDuckDBReadsExport(t *testing.T) {
	bin := buildTool(t)
	dir := t.TempDir()
	paths := make([]string, len(duckCaptures))
	for i, n := range duckCaptures {
		paths[i] = testcap.Real(n)
	}
	tool(t, bin, append([]string{"export", "--format", "parquet", "--packets", "-o", dir}, paths...)...)

	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	from := func(table string) string {
		return fmt.Sprintf("read_parquet('%s', hive_partitioning = true, hive_types = {'capture': VARCHAR})",
			filepath.Join(dir, table, "*", "*.parquet"))
	}

	var wantConns, wantFrameFindings, wantConnFindings, wantPackets, wantExtras, wantQPs []string
	for _, p := range paths {
		capture := CaptureName(p)
		// conns --json: one object per connection.
		jsonLines(t, tool(t, bin, "conns", "--json", p), func(line []byte) {
			var c struct {
				ID                                        int
				State, Transport, Client, Server, Service string
				ServiceID                                 *string `json:"service_id"`
				ClientQPN                                 *int64  `json:"client_qpn"`
				ServerQPN                                 *int64  `json:"server_qpn"`
				RequestFrame                              *int64  `json:"request_frame"`
				EstablishedFrame                          *int64  `json:"established_frame"`
				Negotiated                                *struct {
					ClientToServerInline int64 `json:"client_to_server_inline"`
				}
				Traffic struct {
					ToServer struct{ Sends int64 } `json:"to_server"`
				}
				Findings []struct {
					Code  string
					Frame int64
				}
				FindingCounts []struct{ Count int64 } `json:"finding_counts"`
				Credits       *struct {
					PeakOutstanding int64 `json:"peak_outstanding"`
				}
				CMTiming *struct {
					RequestToReplyMS *float64 `json:"request_to_reply_ms"`
				} `json:"cm_timing"`
				QueuePairs []struct {
					Side                                    string
					QPN, Packets, Requests, Retransmissions int64
					PSNGaps                                 int64 `json:"psn_gaps"`
				} `json:"queue_pairs"`
			}
			if err := json.Unmarshal(line, &c); err != nil {
				t.Fatal(err)
			}
			inline := "NULL"
			if c.Negotiated != nil {
				inline = fmt.Sprint(c.Negotiated.ClientToServerInline)
			}
			sid := "NULL"
			if c.ServiceID != nil {
				sid = *c.ServiceID
			}
			total := int64(0)
			for _, n := range c.FindingCounts {
				total += n.Count
			}
			wantConns = append(wantConns, strings.Join([]string{capture, fmt.Sprint(c.ID), c.State, c.Transport, c.Client, c.Server,
				sid, c.Service, nullable(c.ClientQPN), nullable(c.ServerQPN), nullable(c.RequestFrame), nullable(c.EstablishedFrame),
				inline, fmt.Sprint(c.Traffic.ToServer.Sends), fmt.Sprint(total)}, "\t"))
			peak, setup := "NULL", "NULL"
			if c.Credits != nil {
				peak = fmt.Sprint(c.Credits.PeakOutstanding)
			}
			if c.CMTiming != nil && c.CMTiming.RequestToReplyMS != nil {
				setup = fmt.Sprint(*c.CMTiming.RequestToReplyMS)
			}
			wantExtras = append(wantExtras, fmt.Sprintf("%s\t%d\t%s\t%s", capture, c.ID, peak, setup))
			for _, q := range c.QueuePairs {
				wantQPs = append(wantQPs, fmt.Sprintf("%s\t%d\t%s\t%d\t%d\t%d\t%d\t%d", capture, c.ID, q.Side, q.QPN,
					q.Packets, q.Requests, q.Retransmissions, q.PSNGaps))
			}
			for _, f := range c.Findings {
				wantConnFindings = append(wantConnFindings, fmt.Sprintf("%s\t%d\t%d\t%s", capture, c.ID, f.Frame, f.Code))
			}
		})
		// -T json: the findings of each frame; and one object per frame.
		jsonLines(t, tool(t, bin, "-T", "json", "-r", p), func(line []byte) {
			var r struct {
				Frame    int64
				Findings []struct {
					Code, Severity, Layer string
					Frame                 int64
				}
			}
			if err := json.Unmarshal(line, &r); err != nil {
				t.Fatal(err)
			}
			if r.Frame != 0 {
				wantPackets = append(wantPackets, fmt.Sprintf("%s\t%d\t%d", capture, r.Frame, len(r.Findings)))
			}
			for _, f := range r.Findings {
				frame := f.Frame
				if frame == 0 {
					frame = r.Frame
				}
				wantFrameFindings = append(wantFrameFindings, fmt.Sprintf("%s\t%d\t%s\t%s\t%s", capture, frame, f.Code, f.Severity, f.Layer))
			}
		})
	}

	gotConns := query(t, db, `SELECT capture, id, state, transport, client, server, coalesce(service_id, 'NULL'), service,
		client_qpn, server_qpn, request_frame, established_frame, negotiated.client_to_server_inline,
		traffic.to_server.sends, findings
		FROM `+from(TableConnections)+``)
	sort.Strings(gotConns)
	sort.Strings(wantConns)
	compareLines(t, "connections", gotConns, wantConns)

	gotExtras := query(t, db, `SELECT capture, id, credits.peak_outstanding, cm_timing.request_to_reply_ms
		FROM `+from(TableConnections))
	sort.Strings(gotExtras)
	sort.Strings(wantExtras)
	compareLines(t, "connections' credits and CM timing", gotExtras, wantExtras)

	gotQPs := query(t, db, `SELECT capture, connection, side, qpn, packets, requests, retransmissions, psn_gaps
		FROM `+from(TableQueuePairs))
	sort.Strings(gotQPs)
	sort.Strings(wantQPs)
	compareLines(t, "queue pairs", gotQPs, wantQPs)
	if len(wantQPs) == 0 {
		t.Fatal("no queue pair in conns --json: the captures no longer test the queue_pairs table")
	}

	// Every connection's count equals conns --json's, per capture.
	counts := query(t, db, `SELECT capture, count(*) FROM `+from(TableConnections)+` GROUP BY capture ORDER BY capture`)
	if len(counts) != len(paths) {
		t.Errorf("connections of %d captures, want %d: %v", len(counts), len(paths), counts)
	}

	gotFrameFindings := query(t, db, `SELECT capture, coalesce(frame, 0), code, severity, layer FROM `+from(TableFindings)+`
		WHERE origin = 'frame'`)
	// Compared as sorted text on both sides (frame numbers sort as text).
	sort.Strings(gotFrameFindings)
	sort.Strings(wantFrameFindings)
	compareLines(t, "frame findings", gotFrameFindings, wantFrameFindings)
	if len(wantFrameFindings) == 0 {
		t.Fatal("no finding on any frame: the captures no longer test the findings table")
	}

	// Each finding conns --json lists is in the table with its connection
	// (written with origin "connection", or once with origin "frame" when
	// the dissector raised it on the connection's CM or MPA frame).
	gotConnFindings := query(t, db, `SELECT DISTINCT capture, connection, coalesce(frame, 0), code FROM `+from(TableFindings)+`
		WHERE connection IS NOT NULL ORDER BY ALL`)
	have := map[string]bool{}
	for _, l := range gotConnFindings {
		have[l] = true
	}
	if len(wantConnFindings) == 0 {
		t.Fatal("no connection finding: the captures no longer test them")
	}
	for _, w := range wantConnFindings {
		if !have[w] {
			t.Errorf("conns --json finding %q is not in the findings table", w)
		}
	}
	// And no connection-origin finding that conns --json does not list.
	listed := map[string]bool{}
	for _, w := range wantConnFindings {
		listed[w] = true
	}
	for _, l := range query(t, db, `SELECT capture, connection, coalesce(frame, 0), code FROM `+from(TableFindings)+`
		WHERE origin = 'connection' AND connection IS NOT NULL`) {
		if !listed[l] {
			t.Errorf("findings table has %q, which conns --json does not list", l)
		}
	}

	gotPackets := query(t, db, `SELECT capture, frame_number, findings FROM `+from(TablePackets)+` ORDER BY capture, frame_number`)
	sort.Slice(wantPackets, func(i, j int) bool { return packetLess(wantPackets[i], wantPackets[j]) })
	compareLines(t, "packets", gotPackets, wantPackets)

	// The RPC calls of the NFS captures are matched to their replies.
	rpc := query(t, db, `SELECT capture, count(*), count(reply_frame), count(*) FILTER (WHERE reply_ms > 0)
		FROM `+from(TableRPC)+` WHERE capture = 'live-rxe4-nfs3.pcap' GROUP BY capture`)
	if len(rpc) != 1 || rpc[0] != "live-rxe4-nfs3.pcap\t21\t21\t21" {
		t.Errorf("rpc of live-rxe4-nfs3.pcap: %v, want 21 calls, all answered", rpc)
	}
	// Every table says its schema version.
	for _, table := range []string{TableConnections, TableQueuePairs, TableFindings, TableRPC, TablePackets} {
		v := query(t, db, `SELECT DISTINCT schema_version FROM `+from(table))
		if len(v) != 1 || v[0] != fmt.Sprint(SchemaVersion) {
			t.Errorf("%s: schema_version %v", table, v)
		}
	}
}

// packetLess orders "capture\tframe\t…" lines by capture, then frame as a
// number (as the query does).
func packetLess(a, b string) bool {
	pa, pb := strings.SplitN(a, "\t", 3), strings.SplitN(b, "\t", 3)
	if pa[0] != pb[0] {
		return pa[0] < pb[0]
	}
	var fa, fb int
	fmt.Sscan(pa[1], &fa)
	fmt.Sscan(pb[1], &fb)
	return fa < fb
}

func compareLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: DuckDB read %d rows, the views give %d", what, len(got), len(want))
	}
	for i := 0; i < min(len(got), len(want)); i++ {
		if got[i] != want[i] {
			t.Errorf("%s row %d:\nDuckDB %q\nviews  %q", what, i, got[i], want[i])
			return
		}
	}
}
