package extract

import (
	"fmt"
	"net/http"
	"strings"

	"golang.org/x/net/html/charset"
)

// sniffLen is how much of a page the WHATWG MIME Sniffing standard reads.
const sniffLen = 512

// checkBinary returns ErrBinary, saying what page looks like, when page is not text.
// net/http.DetectContentType sniffs its first 512 bytes as the WHATWG MIME Sniffing
// standard says: a page that starts as HTML, XML or text with a byte order mark is
// text. Otherwise page is binary when
//   - it starts as a PDF or PostScript file does;
//   - it starts as an image, audio, video, font or archive does and its first 512
//     bytes hold at least one binary byte (binaryByte): every such format has some
//     there, so a text that happens to start with "BM" or "ID3" is not taken for one;
//   - at least two of its first 512 bytes, and at least 1 in 16, are binary bytes,
//     unless contentType declares UTF-16, whose ASCII characters hold NULs. Random or
//     compressed bytes have 1 in 10, so a stray NUL or bell in a text page is not
//     enough.
func checkBinary(page []byte, contentType string) error {
	head := page[:min(len(page), sniffLen)]
	mt, _, _ := strings.Cut(http.DetectContentType(head), ";")
	if strings.HasPrefix(mt, "text/") {
		return nil
	}
	n := 0
	for _, b := range head {
		if binaryByte(b) {
			n++
		}
	}
	switch {
	case mt == "application/pdf", mt == "application/postscript":
	case mt != "application/octet-stream":
		if n == 0 {
			return nil
		}
	case n < 2 || n*16 < len(head):
		return nil
	default:
		if _, name, _ := charset.DetermineEncoding(page, contentType); name == "utf-16le" || name == "utf-16be" {
			return nil
		}
		return fmt.Errorf("%w: %d of its first %d bytes are control bytes such as NUL, which no text holds (UTF-16 without a byte order mark needs its charset in the Content-Type)", ErrBinary, n, len(head))
	}
	return fmt.Errorf("%w: it starts as %s does", ErrBinary, mt)
}

// binaryByte reports whether b is a binary data byte of the WHATWG MIME Sniffing
// standard: a control byte that text does not use (tab, line feed, form feed, carriage
// return and escape, which ISO-2022-JP uses, are not).
func binaryByte(b byte) bool {
	return b <= 0x08 || b == 0x0b || (b >= 0x0e && b <= 0x1a) || (b >= 0x1c && b <= 0x1f)
}
