package corpus

import (
	"bytes"
	"encoding/binary"
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
	"github.com/parquet-go/parquet-go/encoding/thrift"
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
	closer   io.Closer
	file     *parquet.File
	cols     [pqColumns]*pqColumn // nil: the field is not set or the file has no such column
	names    [pqColumns]string    // the fields' dotted paths
	groups   []parquet.RowGroup
	g        int   // the current row group, from 0
	left     int64 // rows of the current row group not read yet
	row      int64 // rows before the next one, from the file's first
	max      int
	progress *atomic.Int64
	counted  int64 // bytes added to progress
	size     int64
	bad      error  // the file cannot be read: reported as a bad first row
	groupErr error  // the row group cannot be read: reported as its bad first row
	head     []byte // page headers being checked
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
	r    io.ReaderAt
	size int64
	err  error
}

// errOffset reports a read outside the file, which a corrupt file's offsets ask for.
var errOffset = errors.New("offset outside the file")

func (r *readerAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > r.size {
		return 0, errOffset
	}
	n, err := r.r.ReadAt(p, off)
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
	s, err := newParquet(path, fh, fh, st.Size(), f, max, progress)
	if err != nil {
		fh.Close()
	}
	return s, err
}

// newParquet reads Parquet from r, size bytes, named name in messages; close closes r.
func newParquet(name string, r io.ReaderAt, close io.Closer, size int64, f *fields, max int, progress *atomic.Int64) (*parquetSource, error) {
	s := &parquetSource{name: name, fh: &readerAt{r: r, size: size}, closer: close, max: max, progress: progress, size: size}
	if err := checkFooter(s.fh, size); err != nil {
		if s.fh.err != nil {
			return nil, fmt.Errorf("corpus: reading %s: %w", name, s.fh.err)
		}
		s.bad = badf(ErrTruncated, "not a readable Parquet file (%v); the file is not read", err)
		return s, nil
	}
	err := guard(func() (err error) {
		s.file, err = parquet.OpenFile(s.fh, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true),
			parquet.ReadBufferSize(64<<10))
		return err
	})
	if s.fh.err != nil {
		return nil, fmt.Errorf("corpus: reading %s: %w", name, s.fh.err)
	}
	if err != nil {
		s.bad = badf(ErrTruncated, "not a readable Parquet file (%v); the file is not read", err)
		return s, nil
	}
	s.groups = s.file.RowGroups()
	if s.bad = checkCodecs(s.file); s.bad == nil {
		if err := guard(func() error { s.bad = s.findColumns(f); return nil }); err != nil {
			s.bad = badf(ErrTruncated, "not a readable Parquet file (%v); the file is not read", err)
		}
	}
	return s, nil
}

// checkCodecs refuses LZ4 pages: parquet-go's LZ4 decoder doubles its buffer for as long
// as a page fails to decode, so a corrupt page would take all memory (FuzzParquet found
// one). The corpora this package reads use snappy, zstd or gzip.
func checkCodecs(f *parquet.File) error {
	for _, rg := range f.Metadata().RowGroups {
		for _, c := range rg.Columns {
			if codec := c.MetaData.Codec; codec == format.Lz4 || codec == format.Lz4Raw {
				return badf(ErrEncoding, "column %q has %v pages, which are not read (a corrupt one would take all memory); rewrite the file with snappy, zstd or gzip; the file is not read",
					strings.Join(c.MetaData.PathInSchema, "."), codec)
			}
		}
	}
	return nil
}

// checkFooter checks the file's last 8 bytes, the footer's length and the magic, before
// the library reads the footer: it would allocate the length the file claims, up to 4
// GiB, even when the file is shorter.
func checkFooter(r io.ReaderAt, size int64) error {
	var tail [8]byte
	if size < 12 {
		return fmt.Errorf("%d bytes, too short", size)
	}
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return err
	}
	if !bytes.Equal(tail[4:], parquetMagic) {
		return fmt.Errorf("no magic %q at the end: truncated, or not Parquet", parquetMagic)
	}
	if n := int64(binary.LittleEndian.Uint32(tail[:4])); n > size-12 {
		return fmt.Errorf("a footer of %d bytes in a file of %d: truncated, or not Parquet", n, size)
	}
	return nil
}

// findColumns looks up the fields' columns in the file's schema and checks their types.
func (s *parquetSource) findColumns(f *fields) error {
	schema := s.file.Schema()
	for i, path := range [pqColumns][]string{f.id, f.text, f.html, f.url, f.priority, f.time} {
		if len(path) == 0 {
			continue
		}
		name := strings.Join(path, ".")
		s.names[i] = name
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
	return s.closer.Close()
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
		if c == nil {
			continue
		}
		if err := s.checkPages(&s.file.Metadata().RowGroups[s.g-1].Columns[c.index].MetaData); err != nil {
			s.groupErr = fmt.Errorf("column %q: %w", c.path, err)
			break
		}
		c.pages = chunks[c.index].Pages()
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
	if s.groupErr != nil {
		bad, s.groupErr = s.badGroup(s.groupErr), nil
		return bad, nil
	}
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
			return s.badGroup(fmt.Errorf("column %q: %w", c.path, err)), nil
		}
		vals[i] = v
	}
	return s.fill(rec, &vals), nil
}

// badGroup skips the rest of the row group for err, which the row being read reports.
func (s *parquetSource) badGroup(err error) error {
	first := s.row
	s.row += s.left
	s.left = 0
	sentinel := ErrTruncated
	if errors.Is(err, ErrTooLarge) {
		sentinel = ErrTooLarge
	}
	return badf(sentinel, "%v; rows %d to %d of row group %d are not read", err, first, s.row, s.g)
}

// checkPages reads the page headers of a column chunk before the library decodes it,
// which allocates what a header claims: a page must lie inside its chunk, and hold at
// most pageLimit bytes and values once decompressed.
func (s *parquetSource) checkPages(meta *format.ColumnMetaData) error {
	start := meta.DataPageOffset
	if d := meta.DictionaryPageOffset; d > 0 && d < start {
		start = d
	}
	end := start + meta.TotalCompressedSize
	if start < 0 || meta.TotalCompressedSize < 0 || end > s.size {
		return fmt.Errorf("column chunk at %d, %d bytes, outside the file's %d", start, meta.TotalCompressedSize, s.size)
	}
	limit := int64(s.max)*2 + 8<<20
	var proto thrift.CompactProtocol
	// Past the chunk's last value, a header that does not decode or a page that runs
	// past the end is not an error: some writers leave the dictionary page's offset
	// unset and count it in the size, so that the end falls inside the next chunk.
	var seen int64
	done := func() bool { return meta.NumValues > 0 && seen >= meta.NumValues }
	for off := start; off < end; {
		var h format.PageHeader
		n, err := s.pageHeader(&proto, off, end, limit, &h)
		if err != nil {
			if done() {
				return nil
			}
			return err
		}
		values := max(h.DataPageHeader.V.NumValues, h.DataPageHeaderV2.V.NumValues, h.DictionaryPageHeader.V.NumValues)
		switch {
		case int64(h.UncompressedPageSize) > limit || int64(h.CompressedPageSize) > limit || int64(values) > limit:
			return fmt.Errorf("%w: a page of %d bytes (%d compressed) and %d values, more than %d; raise MaxRecordBytes to read it",
				ErrTooLarge, h.UncompressedPageSize, h.CompressedPageSize, values, limit)
		case h.CompressedPageSize < 0 || off+n+int64(h.CompressedPageSize) > end:
			if done() {
				return nil
			}
			return fmt.Errorf("a page of %d bytes at %d runs past its column chunk", h.CompressedPageSize, off)
		}
		off += n + int64(h.CompressedPageSize)
		if !h.DictionaryPageHeader.Valid {
			seen += int64(values)
		}
	}
	return nil
}

// pageHeader decodes the page header at off, reading a few KiB, then more, up to end or
// limit bytes (a header holds the page's statistics: its smallest and largest values),
// and returns its length.
func (s *parquetSource) pageHeader(proto *thrift.CompactProtocol, off, end, limit int64, h *format.PageHeader) (int64, error) {
	for size := int64(4 << 10); ; size *= 4 {
		size = min(size, end-off)
		if cap(s.head) < int(size) {
			s.head = make([]byte, size)
		}
		b := s.head[:size]
		if _, err := s.fh.ReadAt(b, off); err != nil && err != io.EOF {
			return 0, err
		}
		r := proto.NewReaderFromBytes(b)
		err := thrift.NewDecoder(r).Decode(h)
		if err == nil {
			return int64(r.BytesRead()), nil
		}
		if size >= limit {
			return 0, fmt.Errorf("%w: a page header of more than %d bytes at %d; raise MaxRecordBytes to read it", ErrTooLarge, limit, off)
		}
		if size == end-off {
			return 0, fmt.Errorf("page header at %d: %w", off, err)
		}
		*h = format.PageHeader{}
	}
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
		return badf(ErrField, "no value in the text column %q nor the html column %q", s.names[pqText], s.names[pqHTML])
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
	if c.i == len(c.buf) {
		if err := guard(c.fill); err != nil {
			return parquet.Value{}, err
		}
	}
	c.i++
	return c.buf[c.i-1], nil
}

// fill reads the next values into buf, from the next page when this one is done.
func (c *pqColumn) fill() error {
	for c.i == len(c.buf) {
		if c.vals == nil {
			c.release()
			p, err := c.pages.ReadPage()
			if err == io.EOF {
				return errShortColumn
			}
			if err != nil {
				return err
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
			return err
		}
	}
	return nil
}

// guard runs f, turning a panic into an error: parquet-go's decoders panic on some
// inconsistent headers of a corrupt file (a data page with more nulls than values, which
// FuzzParquet found) rather than return an error, and a corrupt file is a bad record.
func guard(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("parquet-go: %v", r)
		}
	}()
	return f()
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
