package corpus

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
)

// input is one path of a run, or one shard of a directory of Parquet shards, with its
// format decided.
type input struct {
	path   string
	format Format
	files  []dirFile // Dir: the files to read, in lexical order
	out    string    // where Copy writes its copy, relative to the output directory
}

// kind is what an item is.
type kind int

const (
	kindDoc  kind = iota // a document: Record is set
	kindBad              // a bad record: err is set
	kindSkip             // not a document (a WARC request, a Dir file of another type)
	kindInfo             // a warcinfo record: not a document, but Copy keeps it
)

// item is what an input yields: a document, a bad record or a skipped one, with what Copy
// needs to write it unchanged.
type item struct {
	kind kind
	rec  Record
	err  error
	// raw is the item's bytes as stored when they are at hand: a JSONL line with its
	// line end, or a WARC record inside a gzip member that holds more than one. Valid
	// until the next item.
	raw []byte
	// start, end are the item's byte span in the file as stored (a plain WARC record, or
	// a gzip member holding just one record), when raw is nil; end is 0 otherwise.
	start, end int64
}

// source reads the items of one input file or directory.
type source interface {
	// next fills it with the next item; io.EOF at the end. Other errors end the run.
	next(it *item) error
	close() error
}

// Reader reads the records of a run's inputs in order: the paths in the order given,
// each directory's files in lexical order, each file's records in file order. A Reader
// is not safe for concurrent use, except Stats, which any goroutine may call at any time.
type Reader struct {
	opt    Options
	inputs []input
	i      int    // the next input to open
	cur    source // nil between inputs
	ids    map[[2]uint64]struct{}
	seeds  [2]maphash.Seed
	fields *fields
	it     item
	// started, when set, is called with each input's source as it is opened (Copy).
	started func(in input, src source) error

	records, bad, skipped, kept, removed, bytes atomic.Int64
	total                                       int64
}

// Open checks the inputs, tells their formats (see Format) and lists the directories'
// files, so that Stats().Total is known, and returns a Reader of them. It reads nothing
// else yet; a path that does not exist or whose format cannot be told is an error.
func Open(paths []string, opt Options) (*Reader, error) {
	opt = opt.withDefaults()
	f, err := newFields(opt)
	if err != nil {
		return nil, err
	}
	r := &Reader{opt: opt, ids: map[[2]uint64]struct{}{}, fields: f,
		seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}}
	if len(paths) == 0 {
		return nil, errors.New("corpus: no input paths")
	}
	for _, p := range paths {
		ins, size, err := openInput(p, opt.Format)
		if err != nil {
			return nil, err
		}
		r.inputs = append(r.inputs, ins...)
		r.total += size
	}
	return r, nil
}

// openInput tells the format of path and its size in bytes (a directory's: its files').
// A directory of Parquet shards is one input per shard.
func openInput(path string, format Format) ([]input, int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, 0, fmt.Errorf("corpus: %w", err)
	}
	in := input{path: path, format: format, out: filepath.Base(path)}
	if st.IsDir() {
		if format != Auto && format != Dir && format != Parquet {
			return nil, 0, fmt.Errorf("corpus: %s is a directory, not %v; use Format Auto, Dir or Parquet", path, format)
		}
		files, size, err := listDir(path)
		if err != nil {
			return nil, 0, err
		}
		if format == Parquet || format == Auto && parquetShards(files) {
			ins, size := shardInputs(files)
			return ins, size, nil
		}
		in.format, in.files = Dir, files
		return []input{in}, size, nil
	}
	if format == Dir {
		return nil, 0, fmt.Errorf("corpus: %s is a file, not a directory; use Format Auto", path)
	}
	if format == Auto {
		if in.format, err = sniffFormat(path); err != nil {
			return nil, 0, err
		}
	}
	return []input{in}, st.Size(), nil
}

// parquetShards reports whether a directory's files are Parquet shards: some are named
// .parquet, and none is a page or text file that would make it a Dir input.
func parquetShards(files []dirFile) bool {
	shards := false
	for _, f := range files {
		if _, ok := dirKind(f.id); ok {
			return false
		}
		shards = shards || isParquetName(f.id)
	}
	return shards
}

// shardInputs returns the .parquet files of a directory as inputs, in lexical order,
// each copied to the same path relative to the output directory, and their total size
// (the other files, _SUCCESS markers and the like, are not read).
func shardInputs(files []dirFile) ([]input, int64) {
	var ins []input
	var size int64
	for _, f := range files {
		if isParquetName(f.id) {
			ins = append(ins, input{path: f.path, format: Parquet, out: filepath.FromSlash(f.id)})
			size += f.size
		}
	}
	return ins, size
}

// isParquetName reports whether a file's name ends in ".parquet", ASCII case ignored.
func isParquetName(name string) bool {
	return strings.HasSuffix(strings.ToLower(name), ".parquet")
}

// sniffFormat tells a file's format from its first bytes, decompressed.
func sniffFormat(path string) (Format, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("corpus: %w", err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	if magic, _ := br.Peek(len(parquetMagic)); bytes.Equal(magic, parquetMagic) || isParquetName(path) {
		return Parquet, nil
	}
	dec, done, err := decompress(br, sniff(br))
	if err != nil {
		return 0, fmt.Errorf("corpus: %s: %w", path, err)
	}
	defer done()
	head := make([]byte, 512)
	n, _ := io.ReadFull(dec, head)
	head = bytes.TrimLeft(bytes.TrimPrefix(head[:n], utf8BOM), " \t\r\n")
	switch {
	case bytes.HasPrefix(head, []byte("WARC/")):
		return WARC, nil
	case bytes.HasPrefix(head, []byte("{")), len(head) == 0:
		return JSONL, nil
	}
	return 0, fmt.Errorf("corpus: %s is neither JSONL (a line starting with '{'), WARC (\"WARC/1.\") nor Parquet (\"PAR1\"); set Format if it is one", path)
}

var utf8BOM = []byte{0xef, 0xbb, 0xbf}

// Next returns the next record: io.EOF after the last one. Bad records are passed to
// Options.OnError and not returned; an error OnError returns, or a failure to read a
// file (not a bad record: an I/O error), is returned and ends the run.
func (r *Reader) Next() (Record, error) {
	for {
		it, err := r.next()
		if err != nil {
			return Record{}, err
		}
		if it.kind == kindDoc {
			return it.rec, nil
		}
	}
}

// next returns the next item of any kind, having counted it, checked the document's id
// for a duplicate and passed a bad record to OnError.
func (r *Reader) next() (*item, error) {
	for {
		if r.cur == nil {
			if r.i == len(r.inputs) {
				return nil, io.EOF
			}
			in := r.inputs[r.i]
			r.i++
			src, err := r.open(in)
			if err != nil {
				return nil, err
			}
			r.cur = src
			if r.started != nil {
				if err := r.started(in, src); err != nil {
					return nil, err
				}
			}
		}
		it := &r.it
		*it = item{}
		err := r.cur.next(it)
		if err == io.EOF {
			err = r.cur.close()
			r.cur = nil
			if err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		if it.kind == kindDoc && !r.firstID(it.rec.ID) {
			it.kind = kindBad
			hint := ""
			if _, ok := r.cur.(*dirSource); ok {
				// A directory's ids are paths relative to it: two versions of a site given
				// side by side repeat each other's.
				hint = "; two directories holding the same relative path give the same id: give their parent directory instead"
			}
			it.err = badf(ErrDuplicateID, "%q is the id of an earlier record%s", it.rec.ID, hint)
		}
		switch it.kind {
		case kindDoc:
			r.records.Add(1)
		case kindSkip, kindInfo:
			r.skipped.Add(1)
		case kindBad:
			r.bad.Add(1)
			if r.opt.OnError != nil {
				if err := r.opt.OnError(BadRecord{Source: it.rec.Source, Err: it.err}); err != nil {
					return nil, err
				}
			}
		}
		return it, nil
	}
}

// firstID records id and reports whether it is new in this run. Ids are kept as 128-bit
// hashes, so a run of a billion records has a 1e-21 chance of a false duplicate.
func (r *Reader) firstID(id string) bool {
	k := [2]uint64{maphash.String(r.seeds[0], id), maphash.String(r.seeds[1], id)}
	if _, ok := r.ids[k]; ok {
		return false
	}
	r.ids[k] = struct{}{}
	return true
}

// open starts reading one input.
func (r *Reader) open(in input) (source, error) {
	switch in.format {
	case Dir:
		return &dirSource{files: in.files, max: r.opt.MaxRecordBytes, bytes: &r.bytes}, nil
	case JSONL:
		return openJSONL(in.path, r.fields, r.opt.MaxRecordBytes, &r.bytes)
	case WARC:
		return openWARC(in.path, r.opt.MaxRecordBytes, &r.bytes)
	case Parquet:
		return openParquet(in.path, r.fields, r.opt.MaxRecordBytes, &r.bytes)
	}
	return nil, fmt.Errorf("corpus: unknown Format %v", in.format)
}

// Close closes the input being read. The Reader is not usable afterwards.
func (r *Reader) Close() error {
	r.i = len(r.inputs)
	if r.cur == nil {
		return nil
	}
	err := r.cur.close()
	r.cur = nil
	return err
}

// Stats returns the counts so far. It is safe to call from any goroutine while another
// calls Next, as a progress display does: Bytes/Total is the share of the input read.
func (r *Reader) Stats() Stats {
	return Stats{
		Records: r.records.Load(), Bad: r.bad.Load(), Skipped: r.skipped.Load(),
		Kept: r.kept.Load(), Removed: r.removed.Load(), Bytes: r.bytes.Load(), Total: r.total,
	}
}

// dirFile is one file of a Dir input.
type dirFile struct {
	path, id string
	size     int64
}

// listDir lists the files under dir in lexical order, with their ids, and the sum of all
// files' sizes.
func listDir(dir string) ([]dirFile, int64, error) {
	var files []dirFile
	var total int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		files = append(files, dirFile{path: path, id: filepath.ToSlash(rel), size: info.Size()})
		total += info.Size()
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("corpus: %w", err)
	}
	return files, total, nil
}
