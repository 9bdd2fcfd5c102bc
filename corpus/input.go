package corpus

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

// compression is how a file is compressed, told by its magic bytes, or how an HTTP
// body is, told by its Content-Encoding.
type compression int

const (
	plain compression = iota
	gzipped
	zstded
	deflated // HTTP only: zlib, or raw deflate as some servers send it
	brotlied // HTTP only: br
)

var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// sniff tells the compression of what br holds from its first bytes.
func sniff(br *bufio.Reader) compression {
	magic, _ := br.Peek(4)
	switch {
	case bytes.HasPrefix(magic, gzipMagic):
		return gzipped
	case bytes.HasPrefix(magic, zstdMagic):
		return zstded
	}
	return plain
}

// maxWindow bounds the zstd window, and so the decoder's memory, whatever a frame
// declares: 128 MiB, the largest that zstd's own levels (up to --ultra -22) use.
const maxWindow = 128 << 20

// decompress returns a reader of what br holds decompressed as c says, and a function
// that releases the decoder. Concatenated gzip members and zstd frames are read as one
// stream. A corrupt or truncated stream reads as an error other than io.EOF.
func decompress(br *bufio.Reader, c compression) (io.Reader, func(), error) {
	switch c {
	case deflated:
		// RFC 9110's deflate is the zlib format, but some servers send raw deflate, and
		// browsers read both: a zlib stream starts with a header whose first byte names
		// deflate (method 8) and whose two bytes are a multiple of 31.
		if h, _ := br.Peek(2); len(h) == 2 && h[0]&0x0f == 8 && (uint(h[0])<<8|uint(h[1]))%31 == 0 {
			z, err := zlib.NewReader(br)
			if err != nil {
				return nil, nil, err
			}
			return z, func() { z.Close() }, nil
		}
		z := flate.NewReader(br)
		return z, func() { z.Close() }, nil
	case brotlied:
		// Brotli's window is at most 16 MiB, so its memory is bounded.
		return brotli.NewReader(br), func() {}, nil
	case gzipped:
		z, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, err
		}
		return z, func() { z.Close() }, nil
	case zstded:
		z, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(maxWindow))
		if err != nil {
			return nil, nil, err
		}
		return z, z.Close, nil
	}
	return br, func() {}, nil
}

// counter counts the bytes read from a file into a run's progress, and keeps the file's
// own read error apart from a decoder's.
type counter struct {
	name  string
	f     io.Reader
	bytes *atomic.Int64
	n     int64 // bytes read from f
	err   error // the last error of f other than io.EOF
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.f.Read(p)
	c.n += int64(n)
	c.bytes.Add(int64(n))
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}

// readLimited reads r whole, up to max bytes: more is ErrTooLarge (saying what, "once
// decompressed" or not), a decoder's error is ErrTruncated.
func readLimited(r io.Reader, max int, what string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	switch {
	case err != nil:
		return nil, badf(ErrTruncated, "%v", err)
	case len(b) > max:
		return nil, badf(ErrTooLarge, "more than %d bytes%s; raise MaxRecordBytes to read it", max, what)
	}
	return b, nil
}

// ioError reports whether err is the file's own read error, which ends the run, rather
// than a decoder's, which makes a bad record.
func (c *counter) ioError() error {
	if c.err != nil {
		return fmt.Errorf("corpus: reading %s: %w", c.name, c.err)
	}
	return nil
}

// ReadAll reads r whole, decompressed when it starts with the gzip or zstd magic bytes,
// for a single page or file that is not part of a run (neardup extract, check and
// compare read theirs so). More than max bytes, before or after decompression, is an
// error wrapping ErrTooLarge, and nothing more is read, so a compressed bomb stops there;
// a corrupt or truncated compressed stream wraps ErrTruncated; an error of r itself is
// returned as it is.
func ReadAll(r io.Reader, max int) ([]byte, error) {
	src := &counter{f: r, bytes: new(atomic.Int64)}
	br := bufio.NewReader(io.LimitReader(src, int64(max)+1))
	c := sniff(br)
	dr, release, err := decompress(br, c)
	if err != nil {
		if src.err != nil {
			return nil, src.err
		}
		return nil, badf(ErrTruncated, "%v", err)
	}
	defer release()
	what := ""
	if c != plain {
		what = " once decompressed"
	}
	b, err := readLimited(dr, max, what)
	switch {
	case src.err != nil:
		return nil, src.err
	case src.n > int64(max): // the compressed input alone is too long
		return nil, badf(ErrTooLarge, "more than %d bytes", max)
	}
	return b, err
}
