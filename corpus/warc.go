package corpus

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"
)

// warcSource reads the records of a WARC file, plain or gzip compressed: one gzip member
// per record (the norm), or any number of records per member (a whole file gzipped).
type warcSource struct {
	name string
	f    io.Closer
	c    *counter
	br   *bufio.Reader // over the file
	gz   *gzip.Reader  // nil for a plain file
	zb   *bufio.Reader // over gz
	rd   *bufio.Reader // br or zb: where records are read
	max  int

	gzStarted   bool  // gzip: gz has read a member header, so it has a decompressor to close
	needMember  bool  // gzip: the current member is done
	memberStart int64 // gzip: the offset of the current member
	inMember    int   // gzip: records started in the current member
	ended       bool

	hdr   []byte // the current record's header, as read
	block []byte // its block
	raw   []byte // gzip: header, block and trailer of a record that shares its member
}

// openWARC opens a WARC file, plain or gzip.
func openWARC(path string, max int, progress *atomic.Int64) (*warcSource, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	return newWARC(path, fh, max, progress), nil
}

// newWARC reads WARC records from fh, named name in messages.
func newWARC(name string, fh io.ReadCloser, max int, progress *atomic.Int64) *warcSource {
	s := &warcSource{name: name, f: fh, max: max}
	s.c = &counter{name: name, f: fh, bytes: progress}
	s.br = bufio.NewReaderSize(s.c, 64<<10)
	s.rd = s.br
	if sniff(s.br) == gzipped {
		s.gz, s.needMember = new(gzip.Reader), true
		s.zb = bufio.NewReaderSize(nil, 64<<10)
		s.rd = s.zb
	}
	return s
}

func (s *warcSource) close() error {
	if s.gzStarted {
		s.gz.Close()
	}
	return s.f.Close()
}

// pos returns the offset in the file of the next byte of br.
func (s *warcSource) pos() int64 { return s.c.n - int64(s.br.Buffered()) }

func (s *warcSource) next(it *item) error {
	for !s.ended {
		if s.gz != nil && s.needMember {
			s.memberStart = s.pos()
			if _, err := s.br.Peek(1); err != nil {
				s.ended = true
				if err := s.c.ioError(); err != nil {
					return err
				}
				return io.EOF
			}
			if err := s.gz.Reset(s.br); err != nil {
				return s.fail(it, s.memberStart, badf(ErrTruncated, "gzip member header: %v; the rest of the file is not read", err))
			}
			s.gzStarted = true
			s.gz.Multistream(false)
			s.zb.Reset(s.gz)
			s.needMember, s.inMember = false, 0
		}
		if err := s.skipBlank(); err != nil {
			if err == io.EOF {
				if s.gz == nil {
					s.ended = true
				}
				s.needMember = true
				continue
			}
			return s.fail(it, s.offset(), err)
		}
		start := s.offset()
		s.inMember++
		it.rec.Source = Source{File: s.name, Format: WARC, Offset: start}
		return s.record(it, start)
	}
	return io.EOF
}

// offset returns the Source.Offset of a record starting at the reader's position.
func (s *warcSource) offset() int64 {
	if s.gz != nil {
		return s.memberStart
	}
	return s.pos()
}

// fail makes it a bad record that ends the file, or returns the file's own read error.
func (s *warcSource) fail(it *item, offset int64, bad error) error {
	s.ended = true
	if err := s.c.ioError(); err != nil {
		return err
	}
	it.kind, it.err = kindBad, bad
	it.rec.Source = Source{File: s.name, Format: WARC, Offset: offset}
	return nil
}

// skipBlank skips empty lines before a record, at most max bytes of them. It returns
// io.EOF at the end of the file or member, a bad-record error for a decoder's error.
func (s *warcSource) skipBlank() error {
	for n := 0; ; n++ {
		b, err := s.rd.Peek(1)
		switch {
		case err == io.EOF:
			return io.EOF
		case err != nil:
			return badf(ErrTruncated, "%v; the rest of the file is not read", err)
		case b[0] != '\r' && b[0] != '\n':
			return nil
		case n > s.max:
			return badf(ErrTooLarge, "more than %d empty lines; the rest of the file is not read", s.max)
		}
		s.rd.ReadByte()
	}
}

// header is a WARC record's named fields.
type header struct {
	typ, id, date, target, contentType string
	length                             int64
}

// record reads one record, starting at the version line, into it.
func (s *warcSource) record(it *item, start int64) error {
	if err := s.readHeader(); err != nil {
		return s.badOrEnd(it, err)
	}
	h, err := parseHeader(s.hdr)
	if err != nil {
		return s.badOrEnd(it, err)
	}
	if h.length > int64(s.max) {
		if s.gz != nil {
			return s.fail(it, start, badf(ErrTooLarge, "Content-Length %d is more than %d; the rest of this compressed file is not read; raise MaxRecordBytes to read it", h.length, s.max))
		}
		if _, err := s.rd.Discard(int(h.length)); err != nil {
			return s.fail(it, start, badf(ErrTruncated, "the file ends inside the block (Content-Length %d)", h.length))
		}
		if err := s.trailer(); err != nil {
			return s.badOrEnd(it, err)
		}
		if h.typ == "response" || h.typ == "resource" {
			it.kind, it.err = kindBad, badf(ErrTooLarge, "Content-Length %d is more than %d; raise MaxRecordBytes to read it", h.length, s.max)
		} else {
			it.kind = kindSkip
		}
		return nil
	}
	s.block = grow(s.block, int(h.length))
	if _, err := io.ReadFull(s.rd, s.block); err != nil {
		return s.fail(it, start, badf(ErrTruncated, "the file ends inside the block (Content-Length %d): %v", h.length, err))
	}
	if err := s.trailer(); err != nil {
		return s.badOrEnd(it, err)
	}
	if err := s.span(it, start); err != nil {
		return s.fail(it, start, err)
	}
	s.document(it, h)
	return nil
}

// span sets where the record is stored, for Copy: its bytes in a plain file or a gzip
// member of its own, else its decompressed bytes. For gzip, it checks the member's end.
func (s *warcSource) span(it *item, start int64) error {
	if s.gz == nil {
		it.start, it.end = start, s.pos()
		return nil
	}
	s.raw = append(append(append(s.raw[:0], s.hdr...), s.block...), "\r\n\r\n"...)
	err := s.skipBlank()
	switch {
	case err == io.EOF && s.inMember == 1:
		s.needMember = true
		it.start, it.end = start, s.pos()
	case err == io.EOF:
		s.needMember = true
		it.raw = s.raw
	case err == nil:
		it.raw = s.raw
	default:
		return err
	}
	return nil
}

// document makes it a document, a skipped record or a bad one by the record's type.
func (s *warcSource) document(it *item, h header) {
	it.kind = kindSkip
	var html []byte
	switch h.typ {
	case "warcinfo":
		it.kind = kindInfo
		return
	case "response":
		if !bytes.HasPrefix(s.block, []byte("HTTP/")) {
			it.kind, it.err = kindBad, badf(ErrSyntax, "a response record without an HTTP response (Content-Type %q)", h.contentType)
			return
		}
		r, err := parseHTTP(s.block)
		if err != nil {
			it.kind, it.err = kindBad, err
			return
		}
		if r.status < 200 || r.status > 299 || !isHTML(r.contentType) {
			return // skipped with its body undecoded: most of a crawl is images and scripts
		}
		if err := r.decodeBody(s.max); err != nil {
			it.kind, it.err = kindBad, err
			return
		}
		html, it.rec.ContentType = r.body, r.contentType
	case "resource":
		if !isHTML(h.contentType) || h.contentType == "" {
			return
		}
		html, it.rec.ContentType = s.block, h.contentType
	default:
		return
	}
	it.kind = kindDoc
	it.rec.ID, it.rec.URL = h.id, h.target
	it.rec.HTML = bytes.Clone(html)
	it.rec.FetchTime, _ = time.Parse(time.RFC3339Nano, h.date)
}

// badOrEnd makes it a bad record for err and finds the next record: in a plain file the
// next line that starts with "WARC/1."; in a gzip file the same within at most max
// decompressed bytes, else the rest of the file is not read. A truncated input ends.
func (s *warcSource) badOrEnd(it *item, err error) error {
	if errors.Is(err, ErrTruncated) {
		return s.fail(it, it.rec.Source.Offset, err)
	}
	it.kind, it.err = kindBad, err
	var n int
	for {
		if b, _ := s.rd.Peek(7); string(b) == "WARC/1." {
			return nil
		}
		if s.gz != nil && n > s.max {
			it.err = fmt.Errorf("%w; no next record within %d bytes, the rest of the file is not read", err, s.max)
			s.ended = true
			return nil
		}
		chunk, rerr := s.rd.ReadSlice('\n')
		n += len(chunk)
		switch {
		case rerr == nil, errors.Is(rerr, bufio.ErrBufferFull):
		case rerr == io.EOF:
			s.needMember = true
			s.ended = s.gz == nil
			return nil
		default:
			s.ended = true
			return s.c.ioError()
		}
	}
}

// readHeader reads the version line and named fields up to the empty line into s.hdr,
// at most max bytes.
func (s *warcSource) readHeader() error {
	s.hdr = s.hdr[:0]
	lineStart := 0
	for {
		chunk, err := s.rd.ReadSlice('\n')
		if len(s.hdr)+len(chunk) > s.max {
			return badf(ErrTooLarge, "header longer than %d bytes", s.max)
		}
		s.hdr = append(s.hdr, chunk...)
		switch {
		case err == nil:
			line := s.hdr[lineStart:]
			if lineStart > 0 && (string(line) == "\r\n" || string(line) == "\n") {
				return nil
			}
			lineStart = len(s.hdr)
		case errors.Is(err, bufio.ErrBufferFull):
		case err == io.EOF:
			return badf(ErrTruncated, "the file ends inside a header")
		default:
			return badf(ErrTruncated, "%v", err)
		}
	}
}

// trailer reads the "\r\n\r\n" after a block ("\n\n" is accepted too).
func (s *warcSource) trailer() error {
	b, err := s.rd.Peek(4)
	switch {
	case string(b) == "\r\n\r\n":
		s.rd.Discard(4)
	case len(b) >= 2 && string(b[:2]) == "\n\n":
		s.rd.Discard(2)
	case err != nil && err != io.EOF:
		return badf(ErrTruncated, "%v", err)
	default:
		return badf(ErrSyntax, "the block does not end with CRLF CRLF where Content-Length says")
	}
	return nil
}

// parseHeader parses a WARC header: "WARC/1.0" or "WARC/1.1", then "Name: value" lines
// (a line starting with a space or tab continues the previous one), then an empty line.
// WARC-Type, WARC-Record-ID, WARC-Date and Content-Length are required.
func parseHeader(hdr []byte) (header, error) {
	var h header
	line, rest, _ := cutLine(hdr)
	if v := string(line); v != "WARC/1.0" && v != "WARC/1.1" {
		return h, badf(ErrSyntax, "version line %q; want WARC/1.0 or WARC/1.1", clip(line))
	}
	var name string
	var length string
	seen := map[string]bool{}
	for {
		line, rest, _ = cutLine(rest)
		if len(line) == 0 {
			break
		}
		var value string
		if line[0] == ' ' || line[0] == '\t' {
			if name == "" {
				return h, badf(ErrSyntax, "continuation line before any field")
			}
			value = strings.TrimSpace(string(line))
		} else {
			n, v, ok := bytes.Cut(line, []byte(":"))
			if !ok || len(bytes.TrimSpace(n)) == 0 {
				return h, badf(ErrSyntax, "header line %q is not Name: value", clip(line))
			}
			name, value = strings.ToLower(string(bytes.TrimSpace(n))), strings.TrimSpace(string(v))
			if seen[name] {
				continue // repeated fields (WARC-Concurrent-To): the first one counts
			}
			seen[name] = true
		}
		var dst *string
		switch name {
		case "warc-type":
			dst = &h.typ
		case "warc-record-id":
			dst = &h.id
		case "warc-date":
			dst = &h.date
		case "warc-target-uri":
			dst = &h.target
		case "content-type":
			dst = &h.contentType
		case "content-length":
			dst = &length
		default:
			continue
		}
		if *dst != "" {
			*dst += " "
		}
		*dst += value
	}
	for _, f := range []struct{ v, name string }{{h.typ, "WARC-Type"}, {h.id, "WARC-Record-ID"}, {h.date, "WARC-Date"}, {length, "Content-Length"}} {
		if f.v == "" {
			return h, badf(ErrSyntax, "no %s", f.name)
		}
	}
	n, err := strconv.ParseInt(length, 10, 64)
	if err != nil || n < 0 || length[0] == '+' {
		return h, badf(ErrSyntax, "Content-Length %q is not a byte count", length)
	}
	h.length = n
	if _, err := time.Parse(time.RFC3339Nano, h.date); err != nil {
		return h, badf(ErrSyntax, "WARC-Date %q is not a W3C date (2006-01-02T15:04:05Z)", h.date)
	}
	h.typ = strings.ToLower(h.typ)
	if h.id = unbracket(h.id); h.id == "" {
		return h, badf(ErrSyntax, "WARC-Record-ID <> names no record")
	}
	h.target = unbracket(h.target)
	return h, nil
}

// unbracket removes the angle brackets around a WARC URI ("<urn:uuid:...>"); WARC 1.1
// writes them around WARC-Record-ID, and some writers around WARC-Target-URI too.
func unbracket(s string) string {
	if len(s) >= 2 && s[0] == '<' && s[len(s)-1] == '>' {
		return s[1 : len(s)-1]
	}
	return s
}

// grow returns b resized to n bytes, reusing its memory when it is large enough.
func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}
