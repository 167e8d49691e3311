package view

import (
	"bytes"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testconn"
)

// TestConnsTableLayout pins the table byte for byte (the layout the
// tablewriter package drew before the table was written here): columns as
// wide as their widest cell plus a space each side, the header rule only
// when there are rows.
func TestConnsTableLayout(t *testing.T) {
	const want = `┌───┬───────────┬─────────────────────┬──────────────────────┬───────────────────────────────────┬───────────────────┬──────────────┬───────────────┬──────────────────┬──────────────────┬────────────────────┬──────────┐
│ # │ Transport │ Client              │ Server               │ Service                           │ QPN c/s           │ State        │ REQ/REP frame │ Client PD        │ Server PD        │ Negotiated c→s/s→c │ Findings │
├───┼───────────┼─────────────────────┼──────────────────────┼───────────────────────────────────┼───────────────────┼──────────────┼───────────────┼──────────────────┼──────────────────┼────────────────────┼──────────┤
│ 1 │ rocev2    │ 192.168.122.10:1023 │ 192.168.122.11:20049 │ NFS/RDMA (rdma_cm TCP port 20049) │ 0x000011/0x000012 │ disconnected │ 1/2           │ v1 R=1 4096/4096 │ v1 R=0 4096/4096 │ 4096/4096 RI=no    │ 1 error  │
└───┴───────────┴─────────────────────┴──────────────────────┴───────────────────────────────────┴───────────────────┴──────────────┴───────────────┴──────────────────┴──────────────────┴────────────────────┴──────────┘
`
	const empty = `┌───┬───────────┬────────┬────────┬─────────┬─────────┬───────┬───────────────┬───────────┬───────────┬────────────────────┬──────────┐
│ # │ Transport │ Client │ Server │ Service │ QPN c/s │ State │ REQ/REP frame │ Client PD │ Server PD │ Negotiated c→s/s→c │ Findings │
└───┴───────────┴────────┴────────┴─────────┴─────────┴───────┴───────────────┴───────────┴───────────┴────────────────────┴──────────┘
`
	var b bytes.Buffer
	if err := WriteConnsTable(&b, testconn.Kernel(t, testconn.LinuxServer)); err != nil {
		t.Fatal(err)
	}
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	if err := WriteConnsTable(&b, nil); err != nil {
		t.Fatal(err)
	}
	if b.String() != empty {
		t.Errorf("empty table:\n%s\nwant:\n%s", b.String(), empty)
	}
}
