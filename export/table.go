package export

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/parquet-go/parquet-go"
)

// table writes the rows of one table of one capture under
// DIR/TABLE/capture=NAME/, as they come. Parquet goes in row groups of
// rowGroupRows rows or maxGroupBytes (a row group is encoded, compressed
// and written when full, so memory holds at most one row group per table)
// and, every partRowGroups row groups, on to a new file (part-0.parquet,
// part-1 …): a Parquet writer keeps the metadata of every row group it
// wrote (column chunks, page indexes) until the footer, and would grow
// with the packets in one file. NDJSON has no footer: one file,
// part-0.ndjson, a line pair per row.
type table[T any] struct {
	name  string
	dir   string
	path  string
	f     *os.File
	o     *Options
	pq    *parquet.GenericWriter[T]
	batch []T // rows not yet handed to pq (Write takes a slice)
	js    *bufio.Writer
	enc   *json.Encoder
	// action is the Elasticsearch bulk API action line written before each
	// document.
	action []byte
	rows   int64
	// part is the number of the file being written, groups its row
	// groups written, groupRows the rows of the row group being filled
	// (handed to pq or in batch) and groupStart pq's Size when that row
	// group began (Parquet).
	part       int
	groups     int
	groupRows  int
	groupStart int64
}

// batchRows is how many rows are gathered before they are handed to the
// Parquet writer (one call per row costs a reflection walk each).
const batchRows = 256

// maxGroupBytes ends a row group before its rows are RowGroupRows when the
// writer's estimate of its size (the values before compression) reaches
// it: the rows of the connections table are wide, and a row group of them
// would otherwise grow with the connections of a capture up to
// RowGroupRows.
const maxGroupBytes = 1 << 20

// partRowGroups is how many row groups a Parquet file holds before the
// table goes on to the next part. The writer keeps about 70 KB of metadata
// per row group of the packets table until the file is closed (2M packets
// in one file: 4 MB); 16 row groups of the default size are 512k rows.
const partRowGroups = 16

// partFile matches the files of a table of one capture, all of them
// replaced by a new export of the capture.
var partFile = regexp.MustCompile(`^part-[0-9]+\.(parquet|ndjson)$`)

func openTable[T any](o *Options, name, capture string) (*table[T], error) {
	dir := filepath.Join(o.Dir, name, "capture="+capture)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// An earlier export of the capture may have written more parts.
	old, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range old {
		if partFile.MatchString(e.Name()) && e.Type().IsRegular() {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return nil, err
			}
		}
	}
	t := &table[T]{name: name, dir: dir, o: o}
	if err := t.openPart(); err != nil {
		return nil, err
	}
	return t, nil
}

// openPart creates the file of part t.part and its writer.
func (t *table[T]) openPart() error {
	o := t.o
	ext := "parquet"
	if o.Format == NDJSON {
		ext = "ndjson"
	}
	t.path = filepath.Join(t.dir, "part-"+strconv.Itoa(t.part)+"."+ext)
	f, err := os.Create(t.path)
	if err != nil {
		return err
	}
	t.f = f
	t.groups, t.groupRows, t.groupStart = 0, 0, 0
	switch o.Format {
	case Parquet:
		// Row groups are ended by write (endGroup), not by the writer.
		t.pq = parquet.NewGenericWriter[T](f,
			parquet.Compression(&parquet.Zstd),
			parquet.PageBufferSize(pageBufferSize),
			parquet.CreatedBy("cmpd-dissect", o.CreatedBy, ""),
			parquet.KeyValueMetadata("cmpd-dissect.schema_version", fmt.Sprint(SchemaVersion)))
		if t.batch == nil {
			t.batch = make([]T, 0, batchRows)
		}
	case NDJSON:
		t.js = bufio.NewWriterSize(f, 64<<10)
		t.enc = json.NewEncoder(t.js)
		t.enc.SetEscapeHTML(false)
		a, _ := json.Marshal(map[string]map[string]string{"index": {"_index": o.IndexPrefix + t.name}})
		t.action = append(a, '\n')
	}
	return nil
}

func (t *table[T]) write(row T) error {
	t.rows++
	if t.o.Format == Parquet {
		if t.f == nil {
			// The last part was full: this row begins the next.
			t.part++
			if err := t.openPart(); err != nil {
				return err
			}
		}
		t.batch = append(t.batch, row)
		t.groupRows++
		if t.groupRows == t.o.rowGroupRows() {
			return t.endGroup()
		}
		if len(t.batch) < cap(t.batch) {
			return nil
		}
		if err := t.flushBatch(); err != nil {
			return err
		}
		if t.pq.Size()-t.groupStart >= maxGroupBytes {
			return t.endGroup()
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

// endGroup writes the row group being filled and, when it is the part's
// last, the part's footer.
func (t *table[T]) endGroup() error {
	if err := t.flushBatch(); err != nil {
		return err
	}
	if err := t.pq.Flush(); err != nil {
		return fmt.Errorf("%s: %v", t.path, err)
	}
	t.groups++
	t.groupRows, t.groupStart = 0, t.pq.Size()
	if t.groups == partRowGroups {
		return t.close()
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
