package cli

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/neardup/neardup/corpus"
)

// maxLine is the longest line, in bytes, that readFingerprints accepts. A fingerprint takes
// at most 20 decimal digits; the bound keeps a file without newlines from being read into
// memory whole.
const maxLine = 1024

// maxDocLine is the longest line, in bytes, that the --lines option of simhash and
// minhash accepts as a document.
const maxDocLine = 64 << 20

// openInput opens the named input, "-" meaning stdin, and returns it with the name to use
// in messages ("stdin" for "-") and a function that closes it. A directory is an error
// that says so: reading it would fail with a less helpful one.
func openInput(e *env, name string) (io.Reader, string, func() error, error) {
	if name == "-" {
		return e.stdin, "stdin", func() error { return nil }, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, "", nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		f.Close()
		return nil, "", nil, fmt.Errorf("%s is a directory: give the files in it (%s)", name, filepath.Join(name, "*"))
	}
	return f, name, f.Close, nil
}

// eachDocument calls fn with the text of the named input ("-" for stdin) read whole, with
// line 0, or, when lines is set, with each of its lines and their numbers from 1, each
// without its "\n" or "\r\n". text is valid only during the call. An error from fn ends
// the reading and is returned as it is; a read error, or a line longer than maxDocLine,
// is returned naming the input.
func eachDocument(e *env, name string, lines bool, fn func(text []byte, line int) error) error {
	r, shown, closeInput, err := openInput(e, name)
	if err != nil {
		return err
	}
	defer closeInput()
	if !lines {
		b, err := io.ReadAll(r)
		if err != nil {
			return fmt.Errorf("reading %s: %w", shown, err)
		}
		return fn(b, 0)
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxDocLine+2)
	line := 0
	for sc.Scan() {
		line++
		if err := fn(sc.Bytes(), line); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%s:%d: line longer than %d MiB; split the document, or drop --lines to read the file whole", shown, line+1, maxDocLine>>20)
		}
		return fmt.Errorf("reading %s: %w", shown, err)
	}
	return nil
}

// fingerprintBlock is the size of the blocks of lines readFingerprints hands to its
// parsing goroutines: large enough that a hand-off costs nothing beside the parsing, small
// enough that the blocks in flight are a few MiB.
const fingerprintBlock = 1 << 20

// readFingerprints reads one fingerprint per line from r (see parseFingerprint), skipping
// blank lines; surrounding whitespace and a trailing "\r" are ignored. A bad or overlong
// line is an error that starts with "name:line:", the first such line's when there are
// several. Blocks of lines are parsed on all CPUs (GOMAXPROCS): on a file of a million
// fingerprints, reading took as long as findall's search.
func readFingerprints(r io.Reader, name string) ([]uint64, error) {
	return readFingerprintBlocks(r, name, fingerprintBlock, runtime.GOMAXPROCS(0))
}

// lineBlock is a block of whole lines for parseLines, and what was found in it.
type lineBlock struct {
	buf  []byte
	line int // the number of lines before buf
	fps  []uint64
	err  error // the first bad line's, or the reader's when it stopped in this block
}

// readFingerprintBlocks is readFingerprints with blocks of size bytes (at least maxLine+2,
// so that every valid line fits in one) cut after their last "\n", parsed by workers
// goroutines. The results are joined in the input's order. Reading stops at the first
// bad line found; at most 2*workers+1 blocks are held at once.
func readFingerprintBlocks(r io.Reader, name string, size, workers int) ([]uint64, error) {
	jobs := make(chan *lineBlock, workers)
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for blk := range jobs {
				blk.fps, blk.err = parseLines(blk.buf, name, blk.line)
				blk.buf = nil
				if blk.err != nil {
					failed.Store(true)
				}
			}
		})
	}
	var blocks []*lineBlock
	var carry []byte // the start of a line the previous block cut
	line := 0
	for !failed.Load() {
		buf := make([]byte, size)
		n := copy(buf, carry)
		m, err := io.ReadFull(r, buf[n:])
		buf = buf[:n+m]
		end := err != nil // the input ended, or failed after what was read: parse it all
		blk := &lineBlock{line: line}
		blocks = append(blocks, blk)
		if end && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			blocks = append(blocks, &lineBlock{err: fmt.Errorf("reading %s: %w", name, err)})
		}
		cut := len(buf)
		if !end {
			i := bytes.LastIndexByte(buf, '\n')
			if i < 0 {
				blk.err = lineTooLong(name, line+1)
				break
			}
			cut = i + 1
		}
		blk.buf, carry = buf[:cut], buf[cut:]
		line += bytes.Count(blk.buf, []byte{'\n'})
		jobs <- blk
		if end {
			break
		}
	}
	close(jobs)
	wg.Wait()
	total := 0
	for _, blk := range blocks {
		if blk.err != nil {
			return nil, blk.err
		}
		total += len(blk.fps)
	}
	fps := make([]uint64, 0, total)
	for _, blk := range blocks {
		fps = append(fps, blk.fps...)
	}
	return fps, nil
}

// parseLines parses the fingerprints in b, whose first line is line+1, as readFingerprints
// describes, and returns them or the first bad line's error.
func parseLines(b []byte, name string, line int) ([]uint64, error) {
	fps := make([]uint64, 0, len(b)/16)
	for len(b) > 0 {
		line++
		if v, n := decimalLine(b); n > 0 {
			fps = append(fps, v)
			b = b[n:]
			continue
		}
		l := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			l, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if n := len(l); n > 0 && l[n-1] == '\r' {
			l = l[:n-1]
		}
		if len(l) > maxLine {
			return nil, lineTooLong(name, line)
		}
		l = bytes.TrimSpace(l)
		if len(l) == 0 {
			continue
		}
		v, err := parseFingerprint(l)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		fps = append(fps, v)
	}
	return fps, nil
}

// decimalLine is parseLines' fast path for the lines simhash-cpp writes: 1 to 20 decimal
// digits and "\n", or the end of b. It returns the value at the start of b and the length
// of its line with the "\n", or n = 0 for any other line (blank, spaced, hex, bad,
// overflowing), which the general path then parses or explains. Digits are checked and
// converted eight at a time in a 64-bit word.
func decimalLine(b []byte) (v uint64, n int) {
	i := 0
	for ; i < 16 && i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if !eightDigits(x) {
			break
		}
		v = v*1e8 + eightValue(x) // 16 digits cannot overflow
	}
	for ; i < 19 && i < len(b) && b[i]-'0' <= 9; i++ {
		v = v*10 + uint64(b[i]-'0') // nor can 19
	}
	if i == 19 && i < len(b) && b[i]-'0' <= 9 {
		hi, lo := bits.Mul64(v, 10)
		var carry uint64
		v, carry = bits.Add64(lo, uint64(b[i]-'0'), 0)
		if hi != 0 || carry != 0 {
			return 0, 0
		}
		i++
	}
	switch {
	case i == 0:
		return 0, 0
	case i == len(b):
		return v, i
	case b[i] == '\n':
		return v, i + 1
	}
	return 0, 0
}

// eightDigits reports whether the eight bytes of x are all ASCII digits: the high nibble
// of each is 3, and adding 6 leaves it 3 (a byte from 0xFA carries into the next, but
// fails its own test).
func eightDigits(x uint64) bool {
	const hi, six, threes = 0xF0F0F0F0F0F0F0F0, 0x0606060606060606, 0x3333333333333333
	return x&hi|(x+six)&hi>>4 == threes
}

// eightValue returns the number the eight ASCII digits of x spell, the first in its low
// byte: pairs of digits, then fours, then eight, combined by one multiply and add each.
func eightValue(x uint64) uint64 {
	x -= 0x3030303030303030
	x = (x*10 + x>>8) & 0x00FF00FF00FF00FF
	x = (x*100 + x>>16) & 0x0000FFFF0000FFFF
	return (x*10000 + x>>32) & 0xFFFFFFFF
}

// lineTooLong is the error for a line of more than maxLine bytes.
func lineTooLong(name string, line int) error {
	return fmt.Errorf("%s:%d: line longer than %d bytes; put one fingerprint per line", name, line, maxLine)
}

// parseFingerprint parses an unsigned 64-bit integer written in decimal (as simhash-cpp
// writes and reads them) or in hex with a "0x" or "0X" prefix. Leading zeros are allowed;
// signs, underscores, spaces and empty digit strings are not. The error says what is wrong
// with b and how to fix it.
func parseFingerprint(b []byte) (uint64, error) {
	digits, base := b, uint64(10)
	if len(b) >= 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X') {
		digits, base = b[2:], 16
	}
	if base == 10 {
		if v, ok := parseDecimal(b); ok {
			return v, nil
		}
	}
	var v uint64
	overflow := false
	for _, c := range digits {
		var d uint64
		switch {
		case '0' <= c && c <= '9':
			d = uint64(c - '0')
		case base == 16 && 'a' <= c && c <= 'f':
			d = uint64(c-'a') + 10
		case base == 16 && 'A' <= c && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, badFingerprint(b)
		}
		// One multiply and add with their carries, not a division by base per digit.
		hi, lo := bits.Mul64(v, base)
		var carry uint64
		v, carry = bits.Add64(lo, d, 0)
		overflow = overflow || hi != 0 || carry != 0
	}
	switch {
	case len(digits) == 0:
		return 0, badFingerprint(b)
	case overflow:
		return 0, fmt.Errorf("%s is out of range: a fingerprint is at most 18446744073709551615 (0xffffffffffffffff)", quoteInput(b))
	}
	return v, nil
}

// parseDecimal is parseFingerprint's fast path for what simhash-cpp writes: 1 to 20
// decimal digits. The first 19 cannot overflow, so only a 20th needs the carries. ok is
// false for anything else (hex, a bad byte, overflow, leading zeros past 20 digits), which
// the general loop then parses or explains.
func parseDecimal(b []byte) (v uint64, ok bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	head := b[:min(len(b), 19)]
	for _, c := range head {
		d := c - '0'
		if d > 9 {
			return 0, false
		}
		v = v*10 + uint64(d)
	}
	if len(b) == 20 {
		d := b[19] - '0'
		if d > 9 {
			return 0, false
		}
		hi, lo := bits.Mul64(v, 10)
		var carry uint64
		v, carry = bits.Add64(lo, uint64(d), 0)
		if hi != 0 || carry != 0 {
			return 0, false
		}
	}
	return v, true
}

// badFingerprint returns the error for a line that is not a number.
func badFingerprint(b []byte) error {
	if len(b) > 1 && b[0] == '-' {
		if _, err := parseFingerprint(b[1:]); err == nil {
			return fmt.Errorf("%s is negative: fingerprints are unsigned 64-bit integers; add 2^64 to signed values (or write them as 0x-hex)", quoteInput(b))
		}
	}
	return fmt.Errorf("%s is not a 64-bit unsigned integer (decimal or 0x-hex)", quoteInput(b))
}

// quoteInput quotes an input line for an error message, shortened to its first 40 bytes.
func quoteInput(b []byte) string {
	if len(b) > 40 {
		return fmt.Sprintf("%q...", b[:40])
	}
	return fmt.Sprintf("%q", b)
}

// readPage reads the named input ("-" for stdin) whole, decompressing it when it starts
// with the gzip or zstd magic bytes (corpus.ReadAll), and returns it with the name to use
// in messages, even with an error. More than maxBytes bytes, before or after
// decompression, is an error naming --max-bytes: the input is not read further, so
// neither a huge file nor a compressed bomb is held in memory.
func readPage(e *env, name string, maxBytes int) ([]byte, string, error) {
	r, shown, closeInput, err := openInput(e, name)
	if err != nil {
		return nil, name, err
	}
	defer closeInput()
	page, err := corpus.ReadAll(r, maxBytes)
	switch {
	case errors.Is(err, corpus.ErrTooLarge):
		return nil, shown, fmt.Errorf("%s is larger than --max-bytes %d (counted after decompression); raise --max-bytes to read it", shown, maxBytes)
	case err != nil:
		return nil, shown, fmt.Errorf("reading %s: %w", shown, err)
	}
	return page, shown, nil
}

// distanceOption turns a --distance flag into the Distance field of neardup.Options and
// dedup.Options, where 0 means the default and a negative value means 0: a flag of 0
// asks for identical fingerprints only.
func distanceOption(flag int) int {
	if flag == 0 {
		return -1
	}
	return flag
}
