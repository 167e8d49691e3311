package main

import (
	"encoding/json"
	"math"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

// tsharkSRT is one row of tshark -z rpc,srt: its Calls column (the
// replies it matched) and the sum of their response times in seconds.
type tsharkSRT struct {
	calls int
	sum   float64
}

// tsharkSRTRows runs tshark -q -z rpc,srt,prog,vers on path and returns
// its rows by procedure name.
func tsharkSRTRows(t *testing.T, path string, prog, vers int) map[string]tsharkSRT {
	t.Helper()
	bin, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed: the comparison with Wireshark is skipped (apt-get install tshark; .ci/run installs it)")
	}
	out, err := exec.Command(bin, "-r", path, "-q", "-z", "rpc,srt,"+strconv.Itoa(prog)+","+strconv.Itoa(vers)).Output()
	if err != nil {
		t.Fatalf("tshark -z rpc,srt on %s: %v", path, err)
	}
	rows := map[string]tsharkSRT{}
	for _, l := range strings.Split(string(out), "\n") {
		// Index  Procedure  Calls  Min  Max  Avg  Sum
		f := strings.Fields(l)
		if len(f) != 7 {
			continue
		}
		if _, err := strconv.Atoi(f[0]); err != nil {
			continue
		}
		calls, err1 := strconv.Atoi(f[2])
		sum, err2 := strconv.ParseFloat(f[6], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("tshark srt row %q", l)
		}
		rows[f[1]] = tsharkSRT{calls, sum}
	}
	return rows
}

// tsharkTwice returns, per NFS procedure name, the replies tshark
// dissects twice in one frame (a reply with a write chunk: once as sent,
// once with the data placed) and their response times, which its srt
// counts twice.
func tsharkTwice(t *testing.T, path string, vers int) map[string]tsharkSRT {
	t.Helper()
	procField := "nfs.procedure_v" + strconv.Itoa(vers)
	twice := map[string]tsharkSRT{}
	for _, row := range testcap.TsharkFields(t, path, "rpc.msgtyp == 1 && "+procField, "rpc.xid", procField, "rpc.time") {
		xids := strings.Split(row[0], ",")
		if len(row) < 3 || len(xids) < 2 {
			continue
		}
		procs, times := strings.Split(row[1], ","), strings.Split(row[2], ",")
		for i := 1; i < len(xids) && i < len(procs) && i < len(times); i++ {
			if xids[i] != xids[0] {
				continue
			}
			d, err := strconv.ParseFloat(times[i], 64)
			if err != nil {
				t.Fatalf("tshark rpc.time %q", times[i])
			}
			name := nfsProcName(vers, procs[i])
			e := twice[name]
			e.calls++
			e.sum += d
			twice[name] = e
		}
	}
	return twice
}

func nfsProcName(vers int, num string) string {
	n, _ := strconv.Atoi(num)
	switch vers {
	case 3:
		return []string{"NULL", "GETATTR", "SETATTR", "LOOKUP", "ACCESS", "READLINK", "READ", "WRITE", "CREATE", "MKDIR",
			"SYMLINK", "MKNOD", "REMOVE", "RMDIR", "RENAME", "LINK", "READDIR", "READDIRPLUS", "FSSTAT", "FSINFO", "PATHCONF", "COMMIT"}[n]
	}
	return []string{"NULL", "COMPOUND"}[n]
}

// rpc --json gives, per NFS (v3, v4) and NFS_ACL (v3) procedure, as many
// replies as tshark's -z rpc,srt counts (less the replies tshark dissects twice) and the same
// average response time within 1 ms, on every NFS capture of the
// repository; the calls it lists as unanswered are those tshark sees no
// reply to (the RNR capture's NULL call, which the peer never received).
func TestRPCMatchesTsharkSRT(t *testing.T) {
	files := testcap.Glob(t, "pcaps/real/*nfs*.pcap")
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			code, stdout, stderr := runCmd(t, "rpc", "--json", path)
			if code != 0 {
				t.Fatalf("rpc --json: exit %d: %s", code, stderr)
			}
			var got rpcJSON
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatalf("rpc --json: %v\n%s", err, stdout)
			}
			compared, tsharkRows := 0, 0
			for _, pv := range []struct{ prog, vers int }{{100003, 3}, {100003, 4}, {100227, 3}} {
				prog, vers := pv.prog, pv.vers
				want := tsharkSRTRows(t, path, prog, vers)
				tsharkRows += len(want)
				twice := map[string]tsharkSRT{}
				if prog == 100003 {
					twice = tsharkTwice(t, path, vers)
				}
				ours := map[string]int{}
				for i, r := range got.Procedures {
					if int(r.ProgramNumber) != prog || int(r.Version) != vers || r.Operation != "" {
						continue
					}
					ours[r.Procedure] = i
				}
				for name, w := range want {
					w.calls -= twice[name].calls
					w.sum -= twice[name].sum
					i, ok := ours[name]
					if !ok {
						t.Errorf("program %d v%d %s: tshark counts %d replies, we have no row", prog, vers, name, w.calls)
						continue
					}
					r := got.Procedures[i]
					compared++
					if r.Replies != w.calls {
						t.Errorf("program %d v%d %s: %d replies, tshark %d", prog, vers, name, r.Replies, w.calls)
						continue
					}
					if avg := w.sum / float64(w.calls) * 1000; math.Abs(avg-r.AvgMS) > 1 {
						t.Errorf("program %d v%d %s: average %.3f ms, tshark %.3f ms", prog, vers, name, r.AvgMS, avg)
					}
				}
				for name, i := range ours {
					// tshark lists only procedures with a reply.
					if _, ok := want[name]; !ok && got.Procedures[i].Replies > 0 {
						t.Errorf("program %d v%d %s: a row tshark does not have", prog, vers, name)
					}
				}
			}
			if compared != tsharkRows {
				t.Errorf("%d procedures compared, tshark has %d", compared, tsharkRows)
			}
			unanswered := map[string]bool{}
			for _, row := range testcap.TsharkFields(t, path, "rpc", "rpc.xid", "rpc.msgtyp") {
				xids, types := strings.Split(row[0], ","), strings.Split(row[1], ",")
				for i := range xids {
					if i < len(types) && types[i] == "0" {
						unanswered[xids[i]] = true
					}
				}
				for i := range xids {
					if i < len(types) && types[i] == "1" {
						delete(unanswered, xids[i])
					}
				}
			}
			for _, c := range got.Unanswered {
				if !unanswered[c.XID] {
					t.Errorf("call %+v listed without reply: tshark has its reply", c)
				}
				delete(unanswered, c.XID)
			}
			for x := range unanswered {
				t.Errorf("tshark sees no reply to the call of xid %s; we do not list it", x)
			}
		})
	}
}
