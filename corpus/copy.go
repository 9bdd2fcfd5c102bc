package corpus

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// CopyOptions say which records Copy writes and how. The zero value writes every
// record, unchanged.
type CopyOptions struct {
	// Keep says whether the document with this id is written; nil keeps all. It is
	// called once per document, in input order, from the goroutine that calls Copy.
	Keep func(id string) bool
	// Removed, when not "", is a directory that receives the documents Keep refuses, in
	// the same layout and formats as outDir, so that the kept and the removed records
	// together are the input, record for record. It must not be outDir.
	Removed string
	// Annotate, when set, makes Copy write every document, annotated with what it
	// returns for the document's id (see Annotation for where the annotation goes); Keep
	// and Removed are then ignored. It is called once per document, in input order.
	Annotate func(id string) Annotation
}

// Annotation is what a deduplication decided about one document, as Copy writes it
// under CopyOptions.Annotate: fields added to a JSONL record, or a line of the sidecar
// file BASE.annotations.jsonl of a WARC file or a directory (see Copy).
type Annotation struct {
	// Cluster is the id of the document's cluster, as clusters.jsonl numbers them; it is
	// meaningful only when HasCluster is set.
	Cluster int64
	// HasCluster is false for a document that has no duplicate (dup_cluster null).
	HasCluster bool
	// Kept is true for a document that is kept: its cluster's representative, or unique.
	Kept bool
	// Method is how the document compares with its cluster's representative: "exact",
	// "simhash" or "minhash"; "" for a kept document.
	Method string
	// Score is the document's "similarity" (minhash) or "distance" (simhash) against the
	// representative, as clusters.jsonl gives it; 0 for "exact" and for a kept document
	// (written as null for both).
	Score float64
}

// Copy is the second pass of a deduplication: it reads paths with opt exactly as Open and
// Next do, so it sees the same records with the same ids and the same bad records (passed
// to opt.OnError again), and writes every document that c.Keep accepts to outDir,
// unchanged and in order, in its input's own format:
//
//   - JSONL: the record's line as it was, in outDir/BASE (BASE the input's file name),
//     compressed as the input was (gzip, zstd or not).
//   - WARC: in outDir/BASE, the record's bytes as stored: a plain record, or the gzip
//     member holding just that record, copied byte for byte; a record that shares a gzip
//     member with others (a whole file gzipped) is written as a gzip member of its own.
//     warcinfo records are kept too; other records that are not documents are not.
//   - Dir: the file, as stored, at the same path relative to outDir as to its directory.
//   - Parquet: in outDir/BASE, or for a shard of a directory at its path relative to
//     that directory, the record's row, every column as it was, in a Parquet file with
//     the input's schema, key-value metadata and each column's codec; an input that is
//     not readable Parquet gets no output file.
//
// With c.Removed, the documents c.Keep refuses go to that directory, in the same layout
// and formats (a WARC file's warcinfo records go to both). With c.Annotate, every
// document is written, annotated with the fields FieldCluster, FieldKept, FieldMethod and
// FieldScore (all four always, null where not relevant):
//
//   - JSONL: added at the end of the record's top-level object, the rest of the line
//     copied byte for byte, not re-encoded. A record that already has a top-level field
//     of one of those names has it replaced: that line alone is re-encoded without it.
//   - Parquet: the rows as above, with the four as columns added after the input's own:
//     dup_cluster an optional int64, dup_kept a boolean, dup_method an optional string,
//     dup_score an optional double. An input that has a top-level column of one of those
//     names already is an error.
//   - WARC and Dir: the records as above, and a sidecar outDir/BASE.annotations.jsonl
//     (SidecarSuffix) with a line per document: {"id", "source" (Source.String), and the
//     four fields}.
//
// Bad records are never written. Copy creates outDir if needed and writes only new files:
// a file that exists (or two inputs with the same file name) is an error. Every input
// file gets its output file, even if nothing in it is kept. The Stats are those of the
// reading, with Kept the documents written to outDir.
func Copy(paths []string, opt Options, outDir string, c CopyOptions) (Stats, error) {
	if c.Annotate != nil {
		c.Keep, c.Removed = nil, ""
	}
	if c.Removed != "" && filepath.Clean(c.Removed) == filepath.Clean(outDir) {
		return Stats{}, fmt.Errorf("corpus: CopyOptions.Removed is the output directory %s; give the removed records a directory of their own", outDir)
	}
	r, err := Open(paths, opt)
	if err != nil {
		return Stats{}, err
	}
	defer r.Close()
	r.fields.annotating = c.Annotate != nil
	for _, dir := range []string{outDir, c.Removed} {
		if dir == "" {
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return r.Stats(), fmt.Errorf("corpus: %w", err)
		}
	}
	var w, rw *copier // the output and the removed records of the input being read
	closeAll := func() error {
		err := errors.Join(w.close(), rw.close())
		w, rw = nil, nil
		return err
	}
	r.started = func(in input, src source) error {
		if err := closeAll(); err != nil {
			return err
		}
		if w, err = newCopier(in, src, outDir, c.Annotate != nil); err != nil {
			return err
		}
		if c.Removed != "" {
			rw, err = newCopier(in, src, c.Removed, false)
		}
		return err
	}
	for {
		it, err := r.next()
		if err == io.EOF {
			break
		}
		if err == nil {
			err = r.copyItem(it, w, rw, &c)
		}
		if err != nil {
			closeAll()
			return r.Stats(), err
		}
	}
	return r.Stats(), closeAll()
}

// copyItem writes one item where c says: to w, or to rw (nil without c.Removed).
func (r *Reader) copyItem(it *item, w, rw *copier, c *CopyOptions) error {
	switch {
	case it.kind == kindInfo: // both halves of a WARC file keep its warcinfo
		if err := w.write(it); err != nil || rw == nil {
			return err
		}
		return rw.write(it)
	case it.kind != kindDoc:
		return nil
	case c.Annotate != nil:
		r.kept.Add(1)
		return w.writeAnnotated(it, c.Annotate(it.rec.ID))
	case c.Keep == nil || c.Keep(it.rec.ID):
		r.kept.Add(1)
		return w.write(it)
	case rw != nil:
		r.removed.Add(1)
		return rw.write(it)
	}
	return nil
}

// copier writes the records of one input to one directory.
type copier struct {
	in     input
	src    *os.File       // the input, read at offsets (WARC)
	out    *os.File       // JSONL, WARC
	bw     *bufio.Writer  // over out
	w      io.WriteCloser // JSONL: the compressor, if any, over bw
	pq     *parquetCopier // Parquet, over bw
	side   *sidecar       // annotate mode, WARC and Dir: the annotations file
	buf    []byte         // an annotated JSONL line
	outDir string
}

// newCopier starts the output of one input; annotate adds a sidecar file for a WARC or
// a Dir input.
func newCopier(in input, src source, outDir string, annotate bool) (*copier, error) {
	c := &copier{in: in, outDir: outDir}
	var err error
	if annotate && in.format != JSONL && in.format != Parquet {
		if c.side, err = newSidecar(in.path, outDir); err != nil {
			return nil, err
		}
	}
	if s, ok := src.(*parquetSource); in.format == Dir || ok && s.file == nil {
		return c, nil // a file that is not Parquet has no schema to write a copy with
	}
	if c.out, err = create(filepath.Join(outDir, in.out)); err != nil {
		c.close()
		return nil, err
	}
	c.bw = bufio.NewWriterSize(c.out, 64<<10)
	switch s := src.(type) {
	case *jsonlSource:
		switch s.z {
		case gzipped:
			c.w = gzip.NewWriter(c.bw)
		case zstded:
			c.w, err = zstd.NewWriter(c.bw)
		}
	case *warcSource:
		c.src, err = os.Open(in.path)
	case *parquetSource:
		c.pq, err = newParquetCopier(in.path, c.bw, annotate)
	}
	if err != nil {
		c.close()
		return nil, fmt.Errorf("corpus: %w", err)
	}
	return c, nil
}

// create creates a new file, and its directory; an existing file is an error.
func create(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("corpus: %s exists: Copy writes only new files; give each input a distinct file name and an empty output directory", path)
	}
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	return f, nil
}

// write writes one item as it was read.
func (c *copier) write(it *item) error {
	var err error
	switch {
	case c.in.format == Dir:
		err = copyFile(it.rec.Source.File, filepath.Join(c.outDir, filepath.FromSlash(it.rec.ID)))
	case c.pq != nil:
		err = c.pq.write(int64(it.rec.Source.Line-1), nil)
	case c.in.format == JSONL:
		err = c.writeLine(it.raw)
	case it.raw != nil: // a WARC record sharing its gzip member
		z := gzip.NewWriter(c.bw)
		if _, err = z.Write(it.raw); err == nil {
			err = z.Close()
		}
	default:
		_, err = io.Copy(c.bw, io.NewSectionReader(c.src, it.start, it.end-it.start))
	}
	if err != nil {
		return fmt.Errorf("corpus: writing %s: %w", it.rec.Source, err)
	}
	return nil
}

// writeAnnotated writes one document with its annotation: in its JSONL line, or as it
// was read and in the sidecar file.
func (c *copier) writeAnnotated(it *item, a Annotation) error {
	if c.pq != nil {
		if err := c.pq.write(int64(it.rec.Source.Line-1), &a); err != nil {
			return fmt.Errorf("corpus: annotating %s: %w", it.rec.Source, err)
		}
		return nil
	}
	if c.in.format != JSONL {
		if err := c.write(it); err != nil {
			return err
		}
		if err := c.side.write(&it.rec, a); err != nil {
			return fmt.Errorf("corpus: annotating %s: %w", it.rec.Source, err)
		}
		return nil
	}
	var err error
	if c.buf, err = annotateLine(c.buf[:0], it.raw, a); err == nil {
		err = c.writeLine(c.buf)
	}
	if err != nil {
		return fmt.Errorf("corpus: annotating %s: %w", it.rec.Source, err)
	}
	return nil
}

// writeLine writes a JSONL line, compressed as the input was.
func (c *copier) writeLine(b []byte) error {
	var err error
	if c.w != nil {
		_, err = c.w.Write(b)
	} else {
		_, err = c.bw.Write(b)
	}
	return err
}

// copyFile copies the file at from to a new file at to.
func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// close finishes the output; a nil copier has nothing to finish.
func (c *copier) close() error {
	if c == nil {
		return nil
	}
	var errs []error
	if c.pq != nil {
		errs = append(errs, c.pq.close())
	}
	if c.w != nil {
		errs = append(errs, c.w.Close())
	}
	if c.bw != nil {
		errs = append(errs, c.bw.Flush())
	}
	if c.side != nil {
		errs = append(errs, c.side.close())
	}
	if c.out != nil {
		errs = append(errs, c.out.Close())
	}
	if c.src != nil {
		errs = append(errs, c.src.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("corpus: writing the copy of %s: %w", c.in.path, err)
	}
	return nil
}
