// Package snapfile frames the snapshot files of neardup's indexes: an 8-byte magic and a
// little-endian uint32 version, the index's own header fields and records, then the
// CRC-32C (Castagnoli) of everything before it as a little-endian uint32. Writer streams
// a snapshot through one buffer; Reader reads one exactly, in the caller's chunks, so the
// caller can refuse a bad header before it allocates for the records.
package snapfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Writer buffers a snapshot's bytes and checksums what it writes. Append to Buf, call
// Room before each record, and Finish at the end. Not safe for concurrent use.
type Writer struct {
	// Buf holds the bytes not yet written; append to it.
	Buf []byte
	w   io.Writer
	crc uint32
	n   int64
	pkg string
}

// NewWriter returns a Writer to w whose Buf holds magic and version and has room for size
// bytes; pkg prefixes its errors ("hamming").
func NewWriter(w io.Writer, pkg, magic string, version uint32, size int) *Writer {
	buf := make([]byte, 0, max(size, len(magic)+4))
	buf = append(buf, magic...)
	buf = binary.LittleEndian.AppendUint32(buf, version)
	return &Writer{Buf: buf, w: w, pkg: pkg}
}

// Room flushes Buf when fewer than n bytes fit in its capacity.
func (sw *Writer) Room(n int) error {
	if len(sw.Buf)+n > cap(sw.Buf) {
		return sw.flush()
	}
	return nil
}

func (sw *Writer) flush() error {
	sw.crc = crc32.Update(sw.crc, castagnoli, sw.Buf)
	n, err := sw.w.Write(sw.Buf)
	sw.n += int64(n)
	sw.Buf = sw.Buf[:0]
	if err != nil {
		return fmt.Errorf("%s: writing index snapshot: %w", sw.pkg, err)
	}
	return nil
}

// Finish writes what Buf holds and the checksum, and returns the bytes written in all.
func (sw *Writer) Finish() (int64, error) {
	if err := sw.flush(); err != nil {
		return sw.n, err
	}
	sw.Buf = binary.LittleEndian.AppendUint32(sw.Buf, sw.crc)
	err := sw.flush()
	return sw.n, err
}

// Reader reads a snapshot and checksums what it reads. Not safe for concurrent use.
type Reader struct {
	r   io.Reader
	crc uint32
	bad error
	pkg string
}

// NewReader returns a Reader of r. Malformed input gives errors wrapping bad (the
// package's snapshot sentinel); pkg prefixes I/O errors.
func NewReader(r io.Reader, pkg string, bad error) *Reader {
	return &Reader{r: r, bad: bad, pkg: pkg}
}

// Header reads the magic and version, checks them against magic and version, and reads
// the index's own header fields into rest.
func (sr *Reader) Header(magic string, version uint32, rest []byte) error {
	_, err := sr.HeaderVersions(magic, version, version, rest)
	return err
}

// HeaderVersions is Header for a format that has several versions, from oldest to
// newest, all still read: it returns the snapshot's version.
func (sr *Reader) HeaderVersions(magic string, oldest, newest uint32, rest []byte) (uint32, error) {
	head := make([]byte, len(magic)+4)
	if err := sr.ReadFull(head, "header"); err != nil {
		return 0, err
	}
	if string(head[:len(magic)]) != magic {
		return 0, fmt.Errorf("%w: magic %q is not %q: not an index snapshot", sr.bad, head[:len(magic)], magic)
	}
	v := binary.LittleEndian.Uint32(head[len(magic):])
	if v < oldest || v > newest {
		if oldest == newest {
			return 0, fmt.Errorf("%w: version %d is unknown; this package reads version %d", sr.bad, v, newest)
		}
		return 0, fmt.Errorf("%w: version %d is unknown; this package reads versions %d to %d", sr.bad, v, oldest, newest)
	}
	return v, sr.ReadFull(rest, "header")
}

// ReadFull reads exactly len(p) bytes, part naming them in errors. Running out of input
// is a truncated snapshot (wrapping bad); any other error from the reader is passed on
// wrapped.
func (sr *Reader) ReadFull(p []byte, part string) error {
	n, err := io.ReadFull(sr.r, p)
	sr.crc = crc32.Update(sr.crc, castagnoli, p[:n])
	if err != nil {
		return sr.fail(err, part)
	}
	return nil
}

// ReadRecords reads len(p) bytes of records of size bytes each, the first of them record
// done+1 of total; an error names the record the input ended in.
func (sr *Reader) ReadRecords(p []byte, size, done, total int) error {
	n, err := io.ReadFull(sr.r, p)
	sr.crc = crc32.Update(sr.crc, castagnoli, p[:n])
	if err != nil {
		return sr.fail(err, fmt.Sprintf("record %d of %d", done+n/size+1, total))
	}
	return nil
}

func (sr *Reader) fail(err error, part string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: truncated in the %s", sr.bad, part)
	}
	return fmt.Errorf("%s: reading index snapshot %s: %w", sr.pkg, part, err)
}

// Verify reads the trailing checksum and checks it against what was read.
func (sr *Reader) Verify() error {
	want := sr.crc
	var tail [4]byte
	if err := sr.ReadFull(tail[:], "checksum"); err != nil {
		return err
	}
	if got := binary.LittleEndian.Uint32(tail[:]); got != want {
		return fmt.Errorf("%w: checksum %#08x does not match the content's %#08x: the snapshot is corrupt", sr.bad, got, want)
	}
	return nil
}
