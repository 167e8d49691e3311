package testconn

import (
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/conn"
	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// TrackFile follows the connections of a capture as the conns command
// does (default configuration) and returns the finished tracker.
func TrackFile(t testing.TB, path string) *conn.Tracker {
	t.Helper()
	src, err := source.OpenFiles([]string{path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	tr := conn.New(conn.Config{})
	d := dissect.New(dissect.Options{})
	if err := d.Run(src, func(r *dissect.Record) error { tr.Record(r); return nil }); err != nil {
		t.Fatal(err)
	}
	tr.Finish()
	return tr
}
