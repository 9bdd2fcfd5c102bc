package corpus

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// parquetMagic starts and ends every Parquet file.
var parquetMagic = []byte("PAR1")

// The columns a parquetSource reads, in the order of parquetSource.cols.
const (
	pqID = iota
	pqText
	pqHTML
	pqURL
	pqPriority
	pqTime
	pqColumns
)

// pqBatch is how many values a column's cursor decodes at a time: enough that the
// per-call cost of the page's value reader vanishes, few enough that the batch of a
// text column is a small share of a page.
const pqBatch = 128

// parquetSource reads the rows of a Parquet file one row group at a time, decoding only
// the columns the fields name (column projection): the other columns' pages are never
// read, and memory holds one page per column read, whatever the file's size.
type parquetSource struct {
	name     string
	fh       *readerAt
	file     *parquet.File
	cols     [pqColumns]*pqColumn // nil: the field is not set or the file has no such column
	groups   []parquet.RowGroup
	g        int   // the current row group, from 0
	left     int64 // rows of the current row group not read yet
	row      int64 // rows before the next one, from the file's first
	max      int
	progress *atomic.Int64
	counted  int64 // bytes added to progress
	size     int64
	bad      error // the file cannot be read: reported as a bad first row
	ended    bool
}

// pqColumn is a cursor over the values of one leaf column in the current row group.
type pqColumn struct {
	path  string // dotted, for messages
	index int    // the leaf column's index in the schema
	kind  parquet.Kind
	unit  time.Duration // a timestamp column's unit; 0 for a string time
	pages parquet.Pages
	page  parquet.Page // the page buf's values point into; released at the next page
	vals  parquet.ValueReader
	buf   []parquet.Value
	i     int // the next value of buf
}

// readerAt is the input file, keeping its own read errors, which end the run, apart from
// the library's complaints about its content, which make bad records.
type readerAt struct {
	f   *os.File
	err error
}

func (r *readerAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := r.f.ReadAt(p, off)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

// openParquet opens a Parquet file and finds the fields' columns. A file that is not
// Parquet, is truncated, or whose columns have the wrong types is not an error here: it
// is one bad record, its first row, and the file yields nothing else.
func openParquet(path string, f *fields, max int, progress *atomic.Int64) (*parquetSource, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("corpus: %w", err)
	}
	s := &parquetSource{name: path, fh: &readerAt{f: fh}, max: max, progress: progress, size: st.Size()}
	s.file, err = parquet.OpenFile(s.fh, s.size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true),
		parquet.ReadBufferSize(64<<10))
	if s.fh.err != nil {
		fh.Close()
		return nil, fmt.Errorf("corpus: reading %s: %w", path, s.fh.err)
	}
	if err != nil {
		s.bad = badf(ErrTruncated, "not a readable Parquet file (%v); the file is not read", err)
		return s, nil
	}
	s.groups = s.file.RowGroups()
	s.bad = s.findColumns(f)
	return s, nil
}

// findColumns looks up the fields' columns in the file's schema and checks their types.
func (s *parquetSource) findColumns(f *fields) error {
	schema := s.file.Schema()
	for i, path := range [pqColumns][]string{f.id, f.text, f.html, f.url, f.priority, f.time} {
		if len(path) == 0 {
			continue
		}
		name := strings.Join(path, ".")
		leaf, ok := schema.Lookup(path...)
		if !ok {
			if isGroup(schema, path) {
				return badf(ErrField, "column %q is a group of columns, not a value; name one of its columns with a dotted path; the file is not read", name)
			}
			continue
		}
		c := &pqColumn{path: name, index: leaf.ColumnIndex, kind: leaf.Node.Type().Kind(), buf: make([]parquet.Value, 0, pqBatch)}
		if leaf.MaxRepetitionLevel > 0 {
			return badf(ErrField, "column %q is repeated (a list), not a single value; the file is not read", name)
		}
		if err := c.check(i, leaf.Node.Type()); err != nil {
			return err
		}
		s.cols[i] = c
	}
	if s.cols[pqText] == nil && s.cols[pqHTML] == nil {
		return badf(ErrField, "no text column %q nor html column %q; the file is not read", strings.Join(f.text, "."), strings.Join(f.html, "."))
	}
	return nil
}

// isGroup reports whether path names a group: some leaf column's path extends it.
func isGroup(schema *parquet.Schema, path []string) bool {
	for _, col := range schema.Columns() {
		if len(col) > len(path) && strings.Join(col[:len(path)], ".") == strings.Join(path, ".") {
			return true
		}
	}
	return false
}

// check returns why a column of type t cannot hold field i, or nil.
func (c *pqColumn) check(i int, t parquet.Type) error {
	want := "a string (BYTE_ARRAY)"
	switch i {
	case pqID:
		want = "a string or an integer"
		if c.kind == parquet.ByteArray || c.kind == parquet.Int32 || c.kind == parquet.Int64 {
			return nil
		}
	case pqPriority:
		want = "a number"
		switch c.kind {
		case parquet.Int32, parquet.Int64, parquet.Float, parquet.Double:
			return nil
		}
	case pqTime:
		want = "a timestamp or an RFC 3339 string"
		if c.kind == parquet.ByteArray {
			return nil
		}
		if lt := t.LogicalType(); c.kind == parquet.Int64 && lt != nil {
			if ts, ok := lt.Value.(*format.TimestampType); ok && ts.Unit.Value != nil {
				c.unit = ts.Unit.Value.Duration()
				return nil
			}
		}
	default:
		if c.kind == parquet.ByteArray {
			return nil
		}
	}
	return badf(ErrField, "column %q is %v, not %s; the file is not read", c.path, t, want)
}

func (s *parquetSource) close() error {
	s.endGroup()
	s.count(s.size - s.counted)
	return s.fh.f.Close()
}

// count adds n bytes to the run's progress.
func (s *parquetSource) count(n int64) {
	s.counted += n
	s.progress.Add(n)
}

func (s *parquetSource) next(it *item) error {
	for {
		if s.ended {
			return io.EOF
		}
		if s.bad != nil {
			s.ended = true
			it.kind, it.err = kindBad, s.bad
			it.rec.Source = Source{File: s.name, Format: Parquet, Line: 1}
			return nil
		}
		if s.left == 0 {
			if s.g == len(s.groups) {
				s.ended = true
				return io.EOF
			}
			s.startGroup()
			continue
		}
		s.left--
		s.row++
		it.rec.Source = Source{File: s.name, Format: Parquet, Line: int(s.row)}
		bad, err := s.read(&it.rec)
		if err != nil {
			return err
		}
		if bad != nil {
			it.kind, it.err = kindBad, bad
		}
		return nil
	}
}

// startGroup moves to the next row group and opens its projected columns' pages.
func (s *parquetSource) startGroup() {
	s.endGroup()
	rg := s.groups[s.g]
	s.g++
	s.left = rg.NumRows()
	chunks := rg.ColumnChunks()
	for _, c := range s.cols {
		if c != nil {
			c.pages = chunks[c.index].Pages()
		}
	}
	if meta := s.file.Metadata().RowGroups[s.g-1]; meta.TotalCompressedSize > 0 {
		s.count(min(meta.TotalCompressedSize, s.size-s.counted))
	}
}

// endGroup releases the current row group's pages.
func (s *parquetSource) endGroup() {
	for _, c := range s.cols {
		if c != nil && c.pages != nil {
			c.release()
			c.pages.Close()
			c.pages = nil
		}
	}
}

// read fills rec from the next row's values. A value that breaks a rule (a text that is
// not UTF-8, an empty id) makes a bad record; a page that does not decode makes one too,
// and ends the row group: its other rows are not read.
func (s *parquetSource) read(rec *Record) (bad, err error) {
	var vals [pqColumns]parquet.Value
	for i, c := range s.cols {
		if c == nil {
			continue
		}
		v, err := c.next()
		if err != nil {
			if s.fh.err != nil {
				return nil, fmt.Errorf("corpus: reading %s: %w", s.name, s.fh.err)
			}
			first := s.row
			s.row += s.left
			s.left = 0
			return badf(ErrTruncated, "column %q: %v; rows %d to %d of row group %d are not read", c.path, err, first, s.row, s.g), nil
		}
		vals[i] = v
	}
	return s.fill(rec, &vals), nil
}

// fill sets rec from one row's values, or returns why the row is a bad record.
func (s *parquetSource) fill(rec *Record, vals *[pqColumns]parquet.Value) error {
	switch v := vals[pqID]; {
	case s.cols[pqID] == nil || v.IsNull():
		rec.ID = s.name + ":" + strconv.FormatInt(s.row, 10)
	case v.Kind() == parquet.ByteArray:
		b := v.ByteArray()
		if len(b) == 0 {
			return badf(ErrField, "id column %q is empty", s.cols[pqID].path)
		}
		if !utf8.Valid(b) {
			return badf(ErrUTF8, "id column %q", s.cols[pqID].path)
		}
		rec.ID = string(b)
	case v.Kind() == parquet.Int32:
		rec.ID = strconv.FormatInt(int64(v.Int32()), 10)
	default:
		rec.ID = strconv.FormatInt(v.Int64(), 10)
	}
	text, html := vals[pqText], vals[pqHTML]
	if text.IsNull() && html.IsNull() {
		return badf(ErrField, "null text and html")
	}
	for _, i := range []int{pqText, pqHTML, pqURL} {
		if v := vals[i]; !v.IsNull() && len(v.ByteArray()) > s.max {
			return badf(ErrTooLarge, "column %q holds %d bytes, more than %d; raise MaxRecordBytes to read it", s.cols[i].path, len(v.ByteArray()), s.max)
		}
	}
	if !text.IsNull() {
		if !utf8.Valid(text.ByteArray()) {
			return badf(ErrUTF8, "text column %q", s.cols[pqText].path)
		}
		rec.Text = string(text.ByteArray())
	}
	if !html.IsNull() {
		rec.HTML = append([]byte{}, html.ByteArray()...)
	}
	if v := vals[pqURL]; !v.IsNull() {
		if !utf8.Valid(v.ByteArray()) {
			return badf(ErrUTF8, "url column %q", s.cols[pqURL].path)
		}
		rec.URL = string(v.ByteArray())
	}
	return s.fillMore(rec, vals)
}

// fillMore sets the priority and time, which few inputs have.
func (s *parquetSource) fillMore(rec *Record, vals *[pqColumns]parquet.Value) error {
	switch v := vals[pqPriority]; {
	case v.IsNull():
	case v.Kind() == parquet.Float:
		rec.Priority = float64(v.Float())
	case v.Kind() == parquet.Double:
		rec.Priority = v.Double()
	case v.Kind() == parquet.Int32:
		rec.Priority = float64(v.Int32())
	default:
		rec.Priority = float64(v.Int64())
	}
	v := vals[pqTime]
	switch c := s.cols[pqTime]; {
	case v.IsNull():
	case c.unit != 0:
		rec.FetchTime = time.Unix(0, 0).UTC().Add(time.Duration(v.Int64()) * c.unit)
	default:
		t, err := time.Parse(time.RFC3339Nano, string(v.ByteArray()))
		if err != nil {
			return badf(ErrField, "time column %q: %q is not RFC 3339 (2006-01-02T15:04:05Z)", c.path, v.ByteArray())
		}
		rec.FetchTime = t
	}
	return nil
}

// errShortColumn reports a column chunk with fewer values than its row group has rows.
var errShortColumn = errors.New("fewer values than the row group has rows")

// next returns the column's next value, valid until the call after the one that reads
// past this page (the value may point into the page).
func (c *pqColumn) next() (parquet.Value, error) {
	for c.i == len(c.buf) {
		if c.vals == nil {
			c.release()
			p, err := c.pages.ReadPage()
			if err == io.EOF {
				return parquet.Value{}, errShortColumn
			}
			if err != nil {
				return parquet.Value{}, err
			}
			c.page, c.vals = p, p.Values()
		}
		n, err := c.vals.ReadValues(c.buf[:cap(c.buf)])
		c.buf, c.i = c.buf[:n], 0
		if n == 0 && err == nil {
			err = errors.New("the page's value reader returned no values")
		}
		if err == io.EOF {
			c.vals = nil
		} else if err != nil {
			return parquet.Value{}, err
		}
	}
	c.i++
	return c.buf[c.i-1], nil
}

// release gives the current page's buffers back to the library, once no value read from
// it is in use.
func (c *pqColumn) release() {
	if c.page != nil {
		parquet.Release(c.page)
		c.page = nil
	}
	c.buf, c.i, c.vals = c.buf[:0], 0, nil
}
