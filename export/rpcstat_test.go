package export

import (
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testconn"
	"github.com/cmpd-dissect/cmpd-dissect/rpcstat"
)

// The rpc table's reply times are the rpc command's: per procedure, as
// many answered rows and the same sum of times, on a capture with replies
// sent again (the rxe stack resending after lost packets) and replies by
// reply chunk; its unanswered rows are the command's calls without reply.
func TestExportRPCTimesAreRPCStats(t *testing.T) {
	for _, name := range []string{"live-rxe4-nfs42-drop.pcap", "live-rxe4-nfs3.pcap"} {
		path := testcap.Real(name)
		dir := t.TempDir()
		exportFile(t, Options{Format: Parquet, Dir: dir}, path)
		rows, err := parquet.ReadFile[RPC](filepath.Join(dir, TableRPC, "capture="+CaptureName(path), "part-0.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		st := rpcstat.New(0)
		testconn.EachRecord(t, path, func(r *dissect.Record) { st.Record(r) })
		type key struct{ prog, vers, proc int64 }
		n, sum := map[key]int{}, map[key]float64{}
		unanswered := 0
		for _, r := range rows {
			if r.ReplyMS == nil {
				unanswered++
				continue
			}
			k := key{*r.Program, *r.Version, *r.Procedure}
			n[k]++
			sum[k] += *r.ReplyMS
		}
		compared := 0
		for _, r := range st.Rows() {
			if r.HasOp {
				continue
			}
			k := key{int64(r.Program), int64(r.Version), int64(r.Procedure)}
			compared++
			if n[k] != r.Replies || math.Abs(sum[k]-float64(r.Sum)/float64(time.Millisecond)) > 1e-6 {
				t.Errorf("%s: %d/%d/%d: export %d replies, %.6f ms in all; rpc %d, %v", name, k.prog, k.vers, k.proc, n[k], sum[k], r.Replies, r.Sum)
			}
		}
		if compared == 0 || unanswered != len(st.Unanswered()) {
			t.Errorf("%s: %d procedures compared; %d unanswered rows, rpc lists %d", name, compared, unanswered, len(st.Unanswered()))
		}
	}
}
