package corpus

import (
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
)

// pqCopyBatch is how many rows a parquetCopier decodes at a time.
const pqCopyBatch = 64

// parquetCopier writes chosen rows of one Parquet input to a new Parquet file with the
// input's schema (every column, nested ones too), each column compressed with the codec
// of its first column chunk in the input, and the input's key-value metadata, values
// unchanged. It reads the input a second time, whole rows, skipping the row groups that
// hold no chosen row; each input row group's chosen rows make one output row group, so
// memory holds one row group's pages, as writing the input did.
type parquetCopier struct {
	fh       io.Closer
	groups   []parquet.RowGroup
	g        int          // the next row group
	rows     parquet.Rows // the current row group's, nil before the first
	next     int64        // the index of the next row rows yields, from the file's first
	end      int64        // the index after the current row group's last row
	batch    []parquet.Row
	bi       int // the next row of batch
	w        *parquet.GenericWriter[any]
	written  bool // rows were written since the last flush
	annotate bool
	leaves   int // the input's leaf columns: the annotation's are after them
}

// newParquetCopier starts copying the Parquet file at path to out; annotate adds the
// annotation columns to the schema, and each write must then give an Annotation.
func newParquetCopier(path string, out io.Writer, annotate bool) (*parquetCopier, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	st, err := fh.Stat()
	if err == nil {
		var f *parquet.File
		f, err = parquet.OpenFile(fh, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
		if err == nil {
			var c *parquetCopier
			if c, err = newParquetWriter(fh, f, out, annotate); err == nil {
				return c, nil
			}
		}
	}
	fh.Close()
	return nil, fmt.Errorf("corpus: copying %s: %w", path, err)
}

// newParquetWriter makes the copier of f, whose file fh closes. An annotated copy of a
// file that has a top-level column of an annotation's name is an error.
func newParquetWriter(fh io.Closer, f *parquet.File, out io.Writer, annotate bool) (*parquetCopier, error) {
	if annotate {
		for _, name := range annotationFields {
			if f.Root().Column(name) != nil {
				return nil, fmt.Errorf("it has a column %s already; an annotated copy adds it (drop the column, or copy without annotations)", name)
			}
		}
	}
	c := &parquetCopier{fh: fh, groups: f.RowGroups(), batch: make([]parquet.Row, 0, pqCopyBatch),
		annotate: annotate, leaves: len(f.Schema().Columns())}
	schema := f.Schema()
	if annotate {
		schema = parquet.NewSchema(schema.Name(), annotatedRoot(f.Root()))
	}
	if err := guard(func() error {
		c.w = parquet.NewGenericWriter[any](out, schema)
		return nil
	}); err != nil {
		return nil, err
	}
	for _, kv := range f.Metadata().KeyValueMetadata {
		// Arrow's copy of the schema would hide the added columns from Arrow readers.
		if !annotate || kv.Key != "ARROW:schema" {
			c.w.SetKeyValueMetadata(kv.Key, kv.Value)
		}
	}
	return c, nil
}

// annotatedRoot returns the input's root group with the annotation columns after its
// own fields, compressed as its first leaf column is.
func annotatedRoot(root *parquet.Column) parquet.Node {
	var codec compress.Codec = &parquet.Uncompressed
	leaf := root
	for !leaf.Leaf() && len(leaf.Columns()) > 0 {
		leaf = leaf.Columns()[0]
	}
	if leaf.Leaf() && leaf.Compression() != nil {
		codec = leaf.Compression()
	}
	fields := append([]parquet.Field{}, root.Fields()...)
	for _, f := range []struct {
		name string
		node parquet.Node
	}{
		{FieldCluster, parquet.Optional(parquet.Int(64))},
		{FieldKept, parquet.Leaf(parquet.BooleanType)},
		{FieldMethod, parquet.Optional(parquet.String())},
		{FieldScore, parquet.Optional(parquet.Leaf(parquet.DoubleType))},
	} {
		fields = append(fields, &addedField{Node: parquet.Compressed(f.node, codec), name: f.name})
	}
	return &group{Node: root, fields: fields}
}

// group is a group node with its fields in a given order; parquet.Group sorts them by
// name, which would reorder the input's columns.
type group struct {
	parquet.Node
	fields []parquet.Field
}

func (g *group) Fields() []parquet.Field { return g.fields }

// addedField is a column the copy adds; it has no Go value to map (rows are written as
// parquet.Row values).
type addedField struct {
	parquet.Node
	name string
}

func (f *addedField) Name() string                      { return f.name }
func (f *addedField) Value(reflect.Value) reflect.Value { return reflect.Value{} }

// write copies the row at index row (from 0) of the input, which must be after those
// written before; ann is its annotation when the copier annotates, else nil.
func (c *parquetCopier) write(row int64, ann *Annotation) error {
	r, err := c.seek(row)
	if err != nil {
		return fmt.Errorf("row %d: %w", row+1, err)
	}
	if c.annotate {
		if err := ann.check(); err != nil {
			return err
		}
		r = appendAnnotationValues(r, ann, c.leaves)
	}
	c.written = true
	return guard(func() error {
		_, err := c.w.WriteRows([]parquet.Row{r})
		return err
	})
}

// appendAnnotationValues appends the annotation columns' values to a row whose input
// has leaves leaf columns, null where appendAnnotation writes null.
func appendAnnotationValues(r parquet.Row, a *Annotation, leaves int) parquet.Row {
	optional := func(v parquet.Value, ok bool, col int) parquet.Value {
		if !ok {
			return parquet.NullValue().Level(0, 0, col)
		}
		return v.Level(0, 1, col)
	}
	return append(r,
		optional(parquet.Int64Value(a.Cluster), a.HasCluster, leaves),
		parquet.BooleanValue(a.Kept).Level(0, 0, leaves+1),
		optional(parquet.ByteArrayValue([]byte(a.Method)), a.Method != "", leaves+2),
		optional(parquet.DoubleValue(a.Score), a.Method != "" && a.Method != "exact", leaves+3))
}

// seek returns the row at index row, valid until the next call, skipping the rows
// between; a row group with none of the rows asked for is not decoded.
func (c *parquetCopier) seek(row int64) (parquet.Row, error) {
	for row >= c.end {
		if err := c.nextGroup(); err != nil {
			return nil, err
		}
	}
	if row < c.next-int64(len(c.batch)-c.bi) {
		return nil, errors.New("rows asked for out of order")
	}
	for {
		if n := len(c.batch) - c.bi; n > 0 {
			first := c.next - int64(n) // the index of batch[bi]
			if row < first+int64(n) {
				c.bi += int(row - first)
				c.bi++
				return c.batch[c.bi-1], nil
			}
			c.bi = len(c.batch)
		}
		var n int
		err := guard(func() (err error) {
			n, err = c.rows.ReadRows(c.batch[:cap(c.batch)])
			return err
		})
		c.batch, c.bi = c.batch[:n], 0
		c.next += int64(n)
		if n == 0 {
			if err == nil || err == io.EOF {
				err = errShortColumn
			}
			return nil, err
		}
	}
}

// nextGroup moves to the next row group, ending the current one's output row group.
func (c *parquetCopier) nextGroup() error {
	if c.g == len(c.groups) {
		return errors.New("past the file's last row")
	}
	if err := c.closeRows(); err != nil {
		return err
	}
	if c.written {
		if err := c.w.Flush(); err != nil {
			return err
		}
		c.written = false
	}
	rg := c.groups[c.g]
	c.g++
	c.next = c.end
	c.end += rg.NumRows()
	c.batch, c.bi = c.batch[:0], 0
	return guard(func() error {
		c.rows = rg.Rows()
		return nil
	})
}

func (c *parquetCopier) closeRows() error {
	if c.rows == nil {
		return nil
	}
	err := c.rows.Close()
	c.rows = nil
	return err
}

// close writes the footer and closes the input; the caller closes the output.
func (c *parquetCopier) close() error {
	return errors.Join(c.closeRows(), guard(c.w.Close), c.fh.Close())
}
