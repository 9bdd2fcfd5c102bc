package corpus

import (
	"bufio"
	"bytes"
	"fmt"
	"mime"
	"net/http/httputil"
	"strconv"
	"strings"
)

// httpResponse is what a document needs of an HTTP response stored in a WARC record.
type httpResponse struct {
	status      int
	contentType string // the Content-Type header, as sent
	body        []byte // as stored, until decodeBody undoes its codings
	te, ce      string // Transfer-Encoding and Content-Encoding, lower case
}

// parseHTTP parses block, an HTTP/1.x response as a WARC response record stores it: the
// status line, header fields up to an empty line, and the body. The status line must be
// well formed; header lines without a colon are ignored, as browsers ignore them. The
// body shares memory with block and is left as stored: decodeBody decodes it, for the
// responses that are documents only.
func parseHTTP(block []byte) (httpResponse, error) {
	var r httpResponse
	line, rest, ok := cutLine(block)
	if !ok {
		return r, badf(ErrSyntax, "HTTP status line does not end")
	}
	status, err := parseStatusLine(line)
	if err != nil {
		return r, err
	}
	r.status = status
	for {
		line, rest, ok = cutLine(rest)
		if !ok {
			return r, badf(ErrSyntax, "HTTP header does not end with an empty line")
		}
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		v := string(bytes.TrimSpace(value))
		switch strings.ToLower(string(bytes.TrimSpace(name))) {
		case "content-type":
			r.contentType = v
		case "transfer-encoding":
			r.te = strings.ToLower(v)
		case "content-encoding":
			r.ce = strings.ToLower(v)
		}
	}
	r.body = rest
	return r, nil
}

// decodeBody undoes the chunked transfer coding and the content codings gzip, deflate,
// br and zstd of r's body, which grows to at most max bytes.
func (r *httpResponse) decodeBody(max int) error {
	if strings.Contains(r.te, "chunked") {
		body, err := readLimited(httputil.NewChunkedReader(bytes.NewReader(r.body)), max, "")
		if err != nil {
			return badf(ErrSyntax, "chunked body: %v", err)
		}
		r.body = body
	}
	c, ok := contentCodings[r.ce]
	if !ok {
		return badf(ErrEncoding, "Content-Encoding %q; only gzip, deflate, br and zstd are decoded", r.ce)
	}
	if c == plain {
		return nil
	}
	z, release, err := decompress(bufio.NewReader(bytes.NewReader(r.body)), c)
	if err != nil {
		return badf(ErrEncoding, "%s body: %v", r.ce, err)
	}
	defer release()
	body, err := readLimited(z, max, " once decompressed")
	if err != nil {
		// Both sentinels: the coding's, and ErrTooLarge's or ErrTruncated's.
		return fmt.Errorf("%w: %s body: %w", ErrEncoding, r.ce, err)
	}
	r.body = body
	return nil
}

// contentCodings are the HTTP Content-Encodings parseHTTP undoes, lower case.
var contentCodings = map[string]compression{
	"": plain, "identity": plain,
	"gzip": gzipped, "x-gzip": gzipped,
	"deflate": deflated,
	"br":      brotlied,
	"zstd":    zstded,
}

// parseStatusLine returns the status code of "HTTP/1.1 200 OK" (the reason is optional).
func parseStatusLine(line []byte) (int, error) {
	proto, rest, _ := bytes.Cut(line, []byte(" "))
	version, ok := bytes.CutPrefix(proto, []byte("HTTP/"))
	if !ok || len(version) == 0 || len(bytes.Trim(version, "0123456789.")) > 0 {
		return 0, badf(ErrSyntax, "HTTP status line %q does not start with HTTP/x.y", clip(line))
	}
	code, _, _ := bytes.Cut(rest, []byte(" "))
	n, err := strconv.Atoi(string(code))
	if err != nil || len(code) != 3 || n < 100 {
		return 0, badf(ErrSyntax, "HTTP status line %q has no 3-digit status code", clip(line))
	}
	return n, nil
}

// cutLine returns b's first line without its "\n" or "\r\n", and the rest; ok is false
// when b has no "\n".
func cutLine(b []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return nil, b, false
	}
	return bytes.TrimSuffix(b[:i], []byte("\r")), b[i+1:], true
}

// isHTML reports whether a Content-Type names HTML, or is empty (a page of unknown type
// is read as HTML).
func isHTML(contentType string) bool {
	if strings.TrimSpace(contentType) == "" {
		return true
	}
	t, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		t, _, _ = strings.Cut(strings.ToLower(contentType), ";")
		t = strings.TrimSpace(t)
	}
	return t == "text/html" || t == "application/xhtml+xml"
}

// clip shortens b to its first 60 bytes for an error message.
func clip(b []byte) []byte {
	if len(b) > 60 {
		return b[:60]
	}
	return b
}
