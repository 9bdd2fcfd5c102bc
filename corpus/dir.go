package corpus

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// dirSource reads the files of a Dir input.
type dirSource struct {
	files []dirFile
	max   int
	bytes *atomic.Int64
}

// dirKind tells a Dir file's type from its name: ".txt" is text, ".html" and ".htm"
// HTML, each optionally followed by ".gz" or ".zst", ASCII case ignored; ok is false for
// other names. Whether the content is compressed is told by its magic bytes, not here.
func dirKind(name string) (html, ok bool) {
	name = strings.ToLower(name)
	for _, z := range []string{".gz", ".zst"} {
		if s, cut := strings.CutSuffix(name, z); cut {
			name = s
			break
		}
	}
	switch {
	case strings.HasSuffix(name, ".txt"):
		return false, true
	case strings.HasSuffix(name, ".html"), strings.HasSuffix(name, ".htm"):
		return true, true
	}
	return false, false
}

func (d *dirSource) next(it *item) error {
	if len(d.files) == 0 {
		return io.EOF
	}
	f := d.files[0]
	d.files = d.files[1:]
	it.rec.Source = Source{File: f.path, Format: Dir}
	it.start, it.end = 0, f.size
	html, ok := dirKind(f.id)
	if !ok {
		it.kind = kindSkip
		d.bytes.Add(f.size)
		return nil
	}
	page, bad, err := d.read(f)
	switch {
	case err != nil:
		return err
	case bad != nil:
		it.kind, it.err = kindBad, bad
	case !utf8.ValidString(f.id):
		it.kind, it.err = kindBad, badf(ErrUTF8, "the file name is not UTF-8; rename it")
	case html:
		it.rec.ID, it.rec.HTML = f.id, page
	case !utf8.Valid(page):
		it.kind, it.err = kindBad, badf(ErrUTF8, "a .txt file must be UTF-8; convert it or name it .html")
	default:
		it.rec.ID, it.rec.Text = f.id, string(page)
	}
	return nil
}

// read returns the file's content, decompressed, or the reason it is a bad record, or an
// I/O error.
func (d *dirSource) read(f dirFile) (page []byte, bad, err error) {
	fh, err := os.Open(f.path)
	if err != nil {
		return nil, nil, fmt.Errorf("corpus: %w", err)
	}
	defer fh.Close()
	defer d.bytes.Add(f.size)
	c := &counter{name: f.path, f: fh, bytes: new(atomic.Int64)}
	br := bufio.NewReader(c)
	z := sniff(br)
	if z == plain && f.size > int64(d.max) {
		return nil, badf(ErrTooLarge, "%d bytes, more than %d; raise MaxRecordBytes to read it", f.size, d.max), nil
	}
	dec, done, err := decompress(br, z)
	if err == nil {
		defer done()
		what := ""
		if z != plain {
			what = " once decompressed"
		}
		page, err = readLimited(dec, d.max, what)
	} else {
		err = badf(ErrTruncated, "%v", err)
	}
	if ioErr := c.ioError(); ioErr != nil {
		return nil, nil, ioErr
	}
	return page, err, nil
}

func (d *dirSource) close() error { return nil }
