package corpus

import "errors"

var (
	// ErrSyntax reports a record that does not parse: a JSONL line that is not a JSON
	// object, a malformed WARC header (version line, header field, Content-Length, date,
	// the CRLF CRLF after the block) or HTTP status line, a chunked body that does not
	// decode. The wrapping BadRecord says where. Test for it with errors.Is.
	ErrSyntax = errors.New("corpus: malformed record")

	// ErrField reports a JSONL record whose id, text, html, url, priority or time field
	// has the wrong JSON type or value (an empty id, a priority that is not a number, a
	// time that is not RFC 3339), or that has neither a text nor an html field. Test for
	// it with errors.Is.
	ErrField = errors.New("corpus: bad field")

	// ErrUTF8 reports a text field, a .txt file or an id that is not valid UTF-8. Test for
	// it with errors.Is.
	ErrUTF8 = errors.New("corpus: invalid UTF-8")

	// ErrTooLarge reports a line, file or WARC record longer than Options.MaxRecordBytes,
	// before or after decompression. In a compressed input it also ends that input (see
	// the package Limits). Raise MaxRecordBytes to read it. Test for it with errors.Is.
	ErrTooLarge = errors.New("corpus: record too large")

	// ErrTruncated reports an input that ends inside a record or a compressed stream, or
	// a compressed stream that is corrupt (bad checksum). The rest of that input is not
	// read. Test for it with errors.Is.
	ErrTruncated = errors.New("corpus: truncated or corrupt input")

	// ErrDuplicateID reports a record whose id an earlier record of the same run has. The
	// first one is read; later ones are bad records. Test for it with errors.Is.
	ErrDuplicateID = errors.New("corpus: duplicate id")

	// ErrEncoding reports a WARC response whose HTTP Content-Encoding is not one of
	// identity, gzip, deflate, br and zstd, or whose body does not decode, or decodes
	// to more than MaxRecordBytes (then the error wraps ErrTooLarge too), and a Parquet
	// file with LZ4 pages. Test for it with errors.Is.
	ErrEncoding = errors.New("corpus: unsupported or corrupt content encoding")
)
