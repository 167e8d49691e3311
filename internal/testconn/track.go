package testconn

import (
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/conn"
	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// EachRecord dissects a capture as the commands do (default options) and
// hands every record to fn; a capture that cannot be read fails t.
func EachRecord(t testing.TB, path string, fn func(*dissect.Record)) {
	t.Helper()
	src, err := source.OpenFiles([]string{path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	d := dissect.New(dissect.Options{})
	if err := d.Run(src, func(r *dissect.Record) error { fn(r); return nil }); err != nil {
		t.Fatal(err)
	}
}

// TrackFile follows the connections of a capture as the conns command
// does (default configuration) and returns the finished tracker.
func TrackFile(t testing.TB, path string) *conn.Tracker {
	t.Helper()
	tr := conn.New(conn.Config{})
	EachRecord(t, path, tr.Record)
	tr.Finish()
	return tr
}
