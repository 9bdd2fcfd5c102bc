// Package corpus streams the documents of a batch deduplication's inputs (JSONL files,
// Parquet files and shards, directory trees of pages, WARC files) as Records, and writes the deduplicated corpus
// back in each input's own format in a second streaming pass (Copy), optionally with the
// removed records apart or every record annotated with the deduplication's decision
// (CopyOptions). Nothing is loaded
// whole: memory is bounded by Options.MaxRecordBytes, whatever the input's size.
//
// # Formats
//
// Open takes any number of paths, files and directories mixed; Options.Format Auto (the
// default) tells each one's format by its content, not its name. Compression is told by
// magic bytes: gzip (1f 8b) or zstd (28 b5 2f fd).
//
//   - JSONL: one JSON object per line, plain, gzip or zstd. Options names the id, text,
//     html, url, priority and time fields, by dotted paths into nested objects
//     ("meta.url"). A record needs a text or an html field (or both); the others are
//     optional. Blank lines are ignored.
//   - Dir: a directory tree, walked in lexical order. .txt files are Text (UTF-8),
//     .html and .htm files HTML, each also as .gz or .zst; other files are skipped and
//     counted (Stats.Skipped).
//   - Parquet: a file (told by the magic "PAR1" or the name .parquet) or a directory
//     holding .parquet shards and no pages, read in lexical order. A row is a record;
//     Options names its columns as for JSONL, a dotted path naming a column of a group
//     ("meta.url"). Only those columns are decoded, a row group at a time, with
//     github.com/parquet-go/parquet-go; pages plain or snappy, zstd, gzip or brotli.
//     Copy writes the kept rows, every column, with the input's schema, key-value
//     metadata and codecs.
//   - WARC: WARC 1.0 or 1.1 (ISO 28500), plain or gzip, one member per record (the norm)
//     or a whole file gzipped. A response record holding an HTTP response with a 2xx
//     status and an HTML Content-Type (text/html, application/xhtml+xml, or none) is a
//     document: Record.HTML is the HTTP body with Transfer-Encoding chunked and its
//     Content-Encoding (gzip, deflate, br or zstd) undone, Record.ContentType the HTTP Content-Type, so that
//     extraction decodes the page's character set. A resource record with an HTML
//     Content-Type is a document too (a page archived without HTTP). Every other record
//     (warcinfo, request, metadata, revisit, conversion, continuation, responses that
//     are redirects, errors, images, PDFs, scripts) is skipped and counted, without its
//     body being decoded.
//
// The WARC reader is this package's own, small and strict about framing (version line,
// named fields, Content-Length, the CRLF CRLF after each block) and lenient inside HTTP
// headers as browsers are. github.com/nlnwa/gowarc, the maintained Go WARC library, was
// considered: it streams, but brings Prometheus, a UUID and a WHATWG URL library with it,
// and it does not tell where each gzip member starts and ends, which Copy needs to write
// records byte for byte.
//
// # Ids
//
// Record.ID is unique within a run:
//
//   - JSONL: the id field, a string or a number as written ("7"); a record without one
//     gets "FILE:LINE", its Source, which differs between files by construction.
//   - Parquet: the id column, a string or an integer in decimal; else "FILE:ROW", the
//     row counted from 1.
//   - Dir: the path relative to the directory given, with forward slashes.
//   - WARC: the WARC-Record-ID without its angle brackets ("urn:uuid:...").
//
// A record whose id an earlier record of the run has is a bad record (ErrDuplicateID):
// the first one wins, whichever input it is in. Two directories holding the same
// relative path therefore clash; read them in separate runs or give the files distinct
// paths.
//
// # Bad records
//
// A record that cannot be read (invalid JSON, invalid UTF-8 in a text field or a .txt
// file, a field of the wrong type, no text or html, an oversized line, file or record, a
// truncated or corrupt compressed stream, a malformed WARC header, a response without an
// HTTP status line, a duplicate id) is a BadRecord, with the file and its line (JSONL) or
// byte offset (WARC) or row (Parquet), and an error wrapping one of the sentinels in errors.go. Each is
// passed to Options.OnError, which skips it (nil) or stops the run (an error); with no
// OnError every bad record is skipped. Stats counts records, bad records and skipped
// ones, so a summary can say what was left out: nothing is dropped silently. After a
// malformed WARC header the reader looks for the next line starting "WARC/1."; after a
// truncated or corrupt compressed stream, the rest of that file is not read. A Parquet
// file that cannot be opened (truncated, not Parquet) or whose columns have the wrong
// type is one bad record, its row 1, and nothing else of it is read; a row group whose
// pages do not decode is one bad record, at the first of its rows not read.
//
// # Example
//
//	r, err := corpus.Open([]string{"crawl.warc.gz", "extra.jsonl.zst", "pages/"}, corpus.Options{
//		OnError: func(b corpus.BadRecord) error { log.Print(b); return nil },
//	})
//	if err != nil {
//		return err
//	}
//	defer r.Close()
//	for {
//		rec, err := r.Next()
//		if err == io.EOF {
//			break
//		}
//		if err != nil {
//			return err
//		}
//		fmt.Println(rec.ID, rec.URL, len(rec.HTML), len(rec.Text))
//	}
//	st := r.Stats() // Records, Bad, Skipped; Bytes of Total for progress
//	...
//	_, err = corpus.Copy(paths, opt, "deduped/", corpus.CopyOptions{Keep: func(id string) bool { return keep[id] }})
//
// # Limits
//
//   - Options.MaxRecordBytes (default 16 MiB) bounds a JSONL line, a Dir file and a WARC
//     record (its header and its block), and each again once decompressed (an HTTP body
//     with a Content-Encoding included). A larger one is a bad record (ErrTooLarge;
//     ErrEncoding too for an HTTP body).
//   - Decompression bombs: for one line or record the reader decompresses at most
//     MaxRecordBytes plus its 64 KiB buffer. In a plain file an oversized line or record
//     is skipped and reading goes on; in a compressed file it can only be skipped by
//     decompressing it, so the rest of that file is not read (the bad record says so).
//   - Memory: a few buffers of MaxRecordBytes per Reader, plus 16 bytes per id read (a
//     128-bit hash in the duplicate check): about 300 MiB for ten million records.
//   - zstd frames declaring a window above 128 MiB are refused (ErrTruncated).
//   - Parquet: a text, html or url value over MaxRecordBytes is a bad record; a page or
//     page header over twice MaxRecordBytes plus 8 MiB, or a page with more values than
//     that, makes its row group bad (ErrTooLarge): the headers are checked before the library allocates what
//     they claim. Memory holds a page of each column read, not the row group.
//
// # Speed
//
// JSONL fields are extracted with github.com/valyala/fastjson, which validates the whole
// line and unescapes only the fields asked for: all of the Reader's work (decompression,
// lines, parsing, copying the fields out, the id check) takes several times less than
// encoding/json's parse of the same lines alone. BenchmarkJSONL reads 100,000 records of
// about 2 KB (id, url, text) plain, zstd and gzip; BenchmarkParquet the same records as
// zstd JSONL and as snappy and zstd Parquet, side by side.
//
// # Concurrency and ownership
//
// A Reader is used by one goroutine; Stats may be called from any goroutine while it
// runs (a progress display: Bytes of Total). Every Record owns its memory: it may be
// handed to other goroutines and kept.
//
// # Caveats
//
//   - A WARC record over MaxRecordBytes in a gzip file ends the reading of that file.
//     Crawls that archive large media can hold such records: raise MaxRecordBytes, or
//     read their HTML responses from a filtered copy.
//   - Segmented WARC records (continuation) are not reassembled, and revisit records
//     (deduplicated by the crawler) are skipped, not resolved to the record they repeat.
//   - HTTP bodies with a Content-Encoding other than gzip, deflate (zlib, or raw
//     deflate as some servers send it), br and zstd, or with more than one, are bad
//     records (ErrEncoding); so are truncated chunked bodies (a crawler's length limit).
//   - JSON strings are unescaped, then checked to be UTF-8; a lone surrogate escape
//     ("\ud800", which is not a character) is kept as those six characters, where
//     encoding/json would write U+FFFD.
//   - Copy copies warcinfo records but not the request and metadata records that go
//     with a kept response.
//   - A Parquet copy decodes every column of the row groups that hold a kept row: a
//     row group whose other columns do not decode ends Copy with an error. Its row
//     groups are the input's, less the rows not kept; its pages are re-encoded by
//     parquet-go with each column's encoding and codec, not copied byte for byte.
//   - Repeated (list) Parquet columns cannot be the text, id or url column.
//   - Parquet files with LZ4 pages are bad records (ErrEncoding), not read: parquet-go's
//     LZ4 decoder grows its buffer without end on a corrupt page.
package corpus
