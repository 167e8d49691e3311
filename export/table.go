package export

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"
)

// table writes the rows of one table of one capture to
// DIR/TABLE/capture=NAME/part-0.EXT, as they come: Parquet in row groups
// of rowGroupRows rows (a row group is encoded, compressed and written when
// full, so memory holds at most one row group per table), NDJSON a line
// pair per row.
type table[T any] struct {
	path  string
	f     *os.File
	pq    *parquet.GenericWriter[T]
	batch []T // rows not yet handed to pq (Write takes a slice)
	js    *bufio.Writer
	enc   *json.Encoder
	// action is the Elasticsearch bulk API action line written before each
	// document.
	action []byte
	rows   int64
}

// batchRows is how many rows are gathered before they are handed to the
// Parquet writer (one call per row costs a reflection walk each).
const batchRows = 256

func openTable[T any](o *Options, name, capture string) (*table[T], error) {
	dir := filepath.Join(o.Dir, name, "capture="+capture)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ext := "parquet"
	if o.Format == NDJSON {
		ext = "ndjson"
	}
	t := &table[T]{path: filepath.Join(dir, "part-0."+ext)}
	f, err := os.Create(t.path)
	if err != nil {
		return nil, err
	}
	t.f = f
	switch o.Format {
	case Parquet:
		t.pq = parquet.NewGenericWriter[T](f,
			parquet.Compression(&parquet.Zstd),
			parquet.MaxRowsPerRowGroup(int64(o.rowGroupRows())),
			parquet.PageBufferSize(pageBufferSize),
			parquet.CreatedBy("cmpd-dissect", o.CreatedBy, ""),
			parquet.KeyValueMetadata("cmpd-dissect.schema_version", fmt.Sprint(SchemaVersion)))
		t.batch = make([]T, 0, batchRows)
	case NDJSON:
		t.js = bufio.NewWriterSize(f, 64<<10)
		t.enc = json.NewEncoder(t.js)
		t.enc.SetEscapeHTML(false)
		a, _ := json.Marshal(map[string]map[string]string{"index": {"_index": o.IndexPrefix + name}})
		t.action = append(a, '\n')
	}
	return t, nil
}

func (t *table[T]) write(row T) error {
	t.rows++
	if t.pq != nil {
		t.batch = append(t.batch, row)
		if len(t.batch) == cap(t.batch) {
			return t.flushBatch()
		}
		return nil
	}
	if _, err := t.js.Write(t.action); err != nil {
		return err
	}
	return t.enc.Encode(row)
}

func (t *table[T]) flushBatch() error {
	if len(t.batch) == 0 {
		return nil
	}
	_, err := t.pq.Write(t.batch)
	clear(t.batch)
	t.batch = t.batch[:0]
	if err != nil {
		return fmt.Errorf("%s: %v", t.path, err)
	}
	return nil
}

// close writes what is buffered and the file's footer.
func (t *table[T]) close() error {
	if t.f == nil {
		return nil
	}
	var err error
	if t.pq != nil {
		err = t.flushBatch()
		if cerr := t.pq.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("%s: %v", t.path, cerr)
		}
	} else {
		err = t.js.Flush()
	}
	if cerr := t.f.Close(); err == nil {
		err = cerr
	}
	t.f = nil
	return err
}

// abort closes the file after an error; what was written stays for a
// look, the error says what went wrong.
func (t *table[T]) abort() {
	if t.f != nil {
		t.f.Close()
		t.f = nil
	}
}
