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
	"unicode/utf8"

	"github.com/valyala/fastjson"
)

// fields holds the JSONL field paths, split at dots.
type fields struct {
	id, text, html, url, priority, time []string
	// annotating is set when Copy annotates: a record's own annotation fields are then
	// removed from its raw line (see stripAnnotation).
	annotating bool
}

// newFields splits the Options' field paths; an empty segment ("a..b", ".a") is an error.
func newFields(o Options) (*fields, error) {
	var f fields
	for _, p := range []struct {
		dst  *[]string
		path string
		name string
	}{{&f.id, o.IDField, "IDField"}, {&f.text, o.TextField, "TextField"}, {&f.html, o.HTMLField, "HTMLField"},
		{&f.url, o.URLField, "URLField"}, {&f.priority, o.PriorityField, "PriorityField"}, {&f.time, o.TimeField, "TimeField"}} {
		if p.path == "" {
			continue
		}
		*p.dst = strings.Split(p.path, ".")
		for _, s := range *p.dst {
			if s == "" {
				return nil, fmt.Errorf("corpus: %s %q has an empty name between dots", p.name, p.path)
			}
		}
	}
	return &f, nil
}

// jsonlSource reads the lines of a JSONL file.
type jsonlSource struct {
	name     string
	f        io.Closer
	c        *counter
	lines    *bufio.Reader // over the file, or over its decoder
	done     func()
	line     int
	buf      []byte // a line longer than lines' buffer
	fields   *fields
	parser   fastjson.Parser
	max      int
	z        compression
	startErr error // the decoder did not start: reported as a bad first line
	ended    bool  // after an error that ends the file
}

// openJSONL opens a JSONL file, plain, gzip or zstd.
func openJSONL(path string, f *fields, max int, progress *atomic.Int64) (*jsonlSource, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	return newJSONL(path, fh, f, max, progress), nil
}

// newJSONL reads JSONL from fh, named name in messages.
func newJSONL(name string, fh io.ReadCloser, f *fields, max int, progress *atomic.Int64) *jsonlSource {
	s := &jsonlSource{name: name, f: fh, fields: f, max: max, done: func() {}}
	s.c = &counter{name: name, f: fh, bytes: progress}
	br := bufio.NewReaderSize(s.c, 64<<10)
	z := sniff(br)
	s.lines, s.z = br, z
	if z != plain {
		dec, done, err := decompress(br, z)
		if err != nil {
			s.ended, s.startErr = true, err
			return s
		}
		s.lines, s.done = bufio.NewReaderSize(dec, 64<<10), done
	}
	return s
}

func (s *jsonlSource) close() error {
	s.done()
	return s.f.Close()
}

func (s *jsonlSource) next(it *item) error {
	for {
		if s.ended {
			if s.line == 0 && s.startErr != nil {
				s.line = 1
				it.kind, it.err = kindBad, badf(ErrTruncated, "%v; the file is not read", s.startErr)
				it.rec.Source = Source{File: s.name, Format: JSONL, Line: 1}
				return nil
			}
			return io.EOF
		}
		raw, bad, err := s.readLine()
		if err != nil {
			return err
		}
		if raw == nil && bad == nil {
			return io.EOF
		}
		s.line++
		it.rec.Source = Source{File: s.name, Format: JSONL, Line: s.line}
		if bad != nil {
			it.kind, it.err = kindBad, bad
			return nil
		}
		line := bytes.TrimRight(raw, "\r\n")
		if s.line == 1 {
			line = bytes.TrimPrefix(line, utf8BOM)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue // blank lines are not records
		}
		it.raw = raw
		v, err := s.fields.parse(&s.parser, line, &it.rec)
		if err != nil {
			it.kind, it.err = kindBad, err
		} else if s.fields.annotating {
			if b := stripAnnotation(v, raw); b != nil {
				it.raw = b
			}
		}
		return nil
	}
}

// readLine returns the next line with its line end, or nil at the end of the file. A
// line over max bytes is skipped in a plain file and ends a compressed one (a bomb may
// not make the reader decompress more than max bytes for a line); either way bad says
// so. A decoder's error is bad too and ends the file; the file's own read error is err.
func (s *jsonlSource) readLine() (raw []byte, bad, err error) {
	s.buf = s.buf[:0]
	tooLong := false
	for {
		chunk, err := s.lines.ReadSlice('\n')
		if !tooLong {
			if len(s.buf) == 0 && err == nil && len(bytes.TrimRight(chunk, "\r\n")) <= s.max {
				return chunk, nil, nil // the common case: the whole line in the buffer
			}
			if len(s.buf)+len(chunk) > s.max+2 { // the line, "\r" and "\n"
				tooLong = true
			} else {
				s.buf = append(s.buf, chunk...)
			}
		}
		switch {
		case err == nil:
			if len(bytes.TrimRight(s.buf, "\r\n")) > s.max {
				tooLong = true
			}
			if tooLong {
				return nil, s.tooLong(), nil
			}
			return s.buf, nil, nil
		case errors.Is(err, bufio.ErrBufferFull):
			if tooLong && s.z != plain {
				s.ended = true
				return nil, s.tooLong(), nil
			}
		case err == io.EOF:
			s.ended = true
			if tooLong {
				return nil, s.tooLong(), nil
			}
			if len(s.buf) == 0 {
				return nil, nil, nil
			}
			if len(bytes.TrimRight(s.buf, "\r\n")) > s.max {
				return nil, s.tooLong(), nil
			}
			return s.buf, nil, nil
		default:
			s.ended = true
			if ioErr := s.c.ioError(); ioErr != nil {
				return nil, nil, ioErr
			}
			return nil, badf(ErrTruncated, "%v; the rest of the file is not read", err), nil
		}
	}
}

// tooLong returns the bad-record error for an overlong line.
func (s *jsonlSource) tooLong() error {
	if s.ended {
		return badf(ErrTooLarge, "line longer than %d bytes once decompressed; the rest of the file is not read; raise MaxRecordBytes to read it", s.max)
	}
	return badf(ErrTooLarge, "line longer than %d bytes; raise MaxRecordBytes to read it", s.max)
}

// parse fills rec from one JSONL line (without its line end) and returns the parsed line,
// valid until p parses again, or returns why it is a bad record. rec.Source is set;
// rec.ID defaults to "FILE:LINE".
func (f *fields) parse(p *fastjson.Parser, line []byte, rec *Record) (*fastjson.Value, error) {
	v, err := p.ParseBytes(line)
	if err != nil {
		return nil, badf(ErrSyntax, "invalid JSON: %v", err)
	}
	if v.Type() != fastjson.TypeObject {
		return nil, badf(ErrSyntax, "a JSONL line must be a JSON object, not %v", v.Type())
	}
	if id := get(v, f.id); id != nil {
		switch id.Type() {
		case fastjson.TypeString:
			b := id.GetStringBytes()
			if len(b) == 0 {
				return nil, badf(ErrField, "id field %q is empty", strings.Join(f.id, "."))
			}
			if !utf8.Valid(b) {
				return nil, badf(ErrUTF8, "id field %q", strings.Join(f.id, "."))
			}
			rec.ID = string(b)
		case fastjson.TypeNumber:
			rec.ID = string(id.MarshalTo(nil))
		default:
			return nil, badf(ErrField, "id field %q is a %v, not a string or number", strings.Join(f.id, "."), id.Type())
		}
	} else {
		rec.ID = rec.Source.File + ":" + strconv.Itoa(rec.Source.Line)
	}
	text, err := getString(v, f.text, "text")
	if err != nil {
		return nil, err
	}
	html, err := getString(v, f.html, "html")
	if err != nil {
		return nil, err
	}
	if text == nil && html == nil {
		return nil, badf(ErrField, "no text field %q nor html field %q", strings.Join(f.text, "."), strings.Join(f.html, "."))
	}
	if text != nil {
		rec.Text = string(text)
	}
	if html != nil {
		rec.HTML = bytes.Clone(html)
	}
	url, err := getString(v, f.url, "url")
	if err != nil {
		return nil, err
	}
	rec.URL = string(url)
	if pv := get(v, f.priority); pv != nil {
		if pv.Type() != fastjson.TypeNumber {
			return nil, badf(ErrField, "priority field %q is a %v, not a number", strings.Join(f.priority, "."), pv.Type())
		}
		rec.Priority, _ = pv.Float64()
	}
	ts, err := getString(v, f.time, "time")
	if err != nil {
		return nil, err
	}
	if ts != nil {
		t, err := time.Parse(time.RFC3339Nano, string(ts))
		if err != nil {
			return nil, badf(ErrField, "time field %q: %q is not RFC 3339 (2006-01-02T15:04:05Z)", strings.Join(f.time, "."), ts)
		}
		rec.FetchTime = t
	}
	return v, nil
}

// get returns the value at path in v, or nil when path is empty, a member is missing or
// the value is null.
func get(v *fastjson.Value, path []string) *fastjson.Value {
	if len(path) == 0 {
		return nil
	}
	x := v.Get(path...)
	if x == nil || x.Type() == fastjson.TypeNull {
		return nil
	}
	return x
}

// getString returns the string at path in v, unescaped and checked to be UTF-8, or nil
// when it is absent. The bytes are valid until the parser parses again.
func getString(v *fastjson.Value, path []string, what string) ([]byte, error) {
	x := get(v, path)
	if x == nil {
		return nil, nil
	}
	if x.Type() != fastjson.TypeString {
		return nil, badf(ErrField, "%s field %q is a %v, not a string", what, strings.Join(path, "."), x.Type())
	}
	b := x.GetStringBytes()
	if !utf8.Valid(b) {
		return nil, badf(ErrUTF8, "%s field %q", what, strings.Join(path, "."))
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}
