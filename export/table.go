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
// rowGroupRows rows, or fewer when the capture's tables together hold
// groupBudget (a row group is encoded, compressed and written when it
// ends), and, every partColumnChunks column chunks, on to a new file
// (part-0.parquet, part-1 …): a Parquet writer keeps the metadata of every
// row group it wrote (column chunks, page indexes) until the footer, and
// would grow with the packets in one file. NDJSON has no footer: one
// file, part-0.ndjson, a line pair per row.
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
	// group began (Parquet). partGroups is how many row groups a part
	// holds (partColumnChunks over the table's columns).
	part       int
	groups     int
	groupRows  int
	groupStart int64
	partGroups int
	// budget is shared with the capture's other tables, groupHeld the
	// estimate of the row group being filled it was last told.
	budget    *budget
	groupHeld int64
}

func (t *table[T]) held() int64 { return t.groupHeld }

// batchRows is how many rows are gathered before they are handed to the
// Parquet writer (one call per row costs a reflection walk each).
const batchRows = 256

// groupBudget is what the row groups being filled of all the tables of a
// capture may hold together (the writers' estimate: values not yet in a
// page, and pages): when they reach it, the table holding the most ends
// its row group. The memory of the export is then bounded from its first
// rows by one figure, however the rows fall among the tables; a table
// with a row in every few packets (packets, rpc) ends its row groups
// often, one with a row in thousands (connections, findings) keeps its
// rows until it holds the most, instead of each having a cap of its own
// that a sparse table reaches only after millions of packets.
const groupBudget = 1 << 20

// budget is the groupBudget shared by the tables of a capture.
type budget struct {
	used   int64
	tables []budgeted
}

// budgeted is a table as the budget sees it.
type budgeted interface {
	// held is the writer's estimate of the row group being filled.
	held() int64
	endGroup() error
}

// spend takes delta more bytes and, while the tables hold more than
// groupBudget, ends the row group of the one holding the most.
func (b *budget) spend(delta int64) error {
	b.used += delta
	for b.used >= groupBudget {
		var most budgeted
		for _, t := range b.tables {
			if most == nil || t.held() > most.held() {
				most = t
			}
		}
		if most == nil || most.held() == 0 {
			return nil
		}
		if err := most.endGroup(); err != nil {
			return err
		}
	}
	return nil
}

// partColumnChunks is how many column chunks (row groups times the
// table's columns) a Parquet file holds before the table goes on to the
// next part: the writer keeps the metadata of each column chunk it wrote
// (statistics, column and offset index) until the footer, so a part of a
// wide table (connections: 85 columns) ends after fewer row groups than
// one of a narrow one (findings: 10).
const partColumnChunks = 256

// partFile matches the files of a table of one capture, all of them
// replaced by a new export of the capture.
var partFile = regexp.MustCompile(`^part-[0-9]+\.(parquet|ndjson)$`)

func openTable[T any](o *Options, b *budget, name, capture string) (*table[T], error) {
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
	t := &table[T]{name: name, dir: dir, o: o, budget: b}
	if err := t.openPart(); err != nil {
		return nil, err
	}
	if o.Format == Parquet {
		b.tables = append(b.tables, t)
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
		if t.pq != nil {
			// The next part: the writer, its column buffers and the
			// room of its metadata serve again.
			t.pq.Reset(f)
			break
		}
		// Row groups are ended by write (endGroup), not by the writer.
		t.pq = parquet.NewGenericWriter[T](f,
			parquet.Compression(&parquet.Zstd),
			parquet.PageBufferSize(pageBufferSize),
			parquet.CreatedBy("cmpd-dissect", o.CreatedBy, ""),
			parquet.KeyValueMetadata("cmpd-dissect.schema_version", fmt.Sprint(SchemaVersion)))
		t.batch = make([]T, 0, batchRows)
		t.partGroups = max(1, partColumnChunks/len(t.pq.Schema().Columns()))
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
		held := t.pq.Size() - t.groupStart
		delta := held - t.groupHeld
		t.groupHeld = held
		return t.budget.spend(delta)
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
	t.budget.used -= t.groupHeld
	t.groupHeld = 0
	if t.groups == t.partGroups {
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
