package corpus

import (
	"fmt"
	"strconv"
	"time"
)

// Format is the layout of an input.
type Format int

const (
	// Auto tells each input's format from what it is: a directory holding .parquet
	// files and no .html, .htm or .txt file is a set of Parquet shards, another directory
	// is Dir; a file that starts with the magic "PAR1" or whose name ends in ".parquet" is
	// Parquet; a file whose content, once decompressed, starts with "WARC/1." is WARC,
	// and one that starts with "{" is JSONL.
	Auto Format = iota
	// JSONL is one JSON object per line, plain, gzip or zstd compressed.
	JSONL
	// Dir is a directory tree of .html, .htm and .txt files, each optionally gzip (.gz)
	// or zstd (.zst) compressed.
	Dir
	// WARC is a WARC 1.0 or 1.1 file, plain or gzip compressed (per record or whole).
	WARC
	// Parquet is an Apache Parquet file, its pages plain or compressed with snappy,
	// gzip, zstd or brotli (not lz4: see the package Caveats), or a directory of .parquet shards
	// (read in lexical order). Each row is a record; the fields name its columns.
	Parquet
)

// String returns "auto", "jsonl", "dir", "warc" or "parquet".
func (f Format) String() string {
	switch f {
	case Auto:
		return "auto"
	case JSONL:
		return "jsonl"
	case Dir:
		return "dir"
	case WARC:
		return "warc"
	case Parquet:
		return "parquet"
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}

// DefaultMaxRecordBytes is Options.MaxRecordBytes when it is zero: 16 MiB.
const DefaultMaxRecordBytes = 16 << 20

// Options says how to read inputs. The zero value reads every input by its content with
// the default field names and limits, and skips bad records, counting them.
type Options struct {
	// Format of every input; Auto (the default) tells each one's by its content, so
	// files of different formats and directories mix in one run.
	Format Format

	// The JSONL fields, each a dotted path into nested objects ("meta.url" is the "url"
	// member of the top-level "meta" object), and likewise the Parquet columns ("meta.url"
	// is the "url" column of the "meta" group). Empty means the default: "id", "text",
	// "html" and "url". A record without the id field gets "FILE:LINE" (see Record.ID).
	IDField, TextField, HTMLField, URLField string
	// PriorityField names a JSON number or numeric Parquet column (Record.Priority);
	// TimeField an RFC 3339 string, or a Parquet timestamp column
	// (Record.FetchTime). Empty means none.
	PriorityField, TimeField string

	// MaxRecordBytes bounds one JSONL line, one file of a Dir input, one WARC record,
	// compressed or decompressed, and one Parquet text, html or url value; 0 means DefaultMaxRecordBytes. Memory in use is a small
	// multiple of it.
	MaxRecordBytes int

	// OnError is called with every bad record, in input order, on the goroutine that
	// calls Next. Returning nil skips the record (it is counted in Stats.Bad); returning
	// an error stops the run: Next returns that error. Nil skips every bad record.
	OnError func(BadRecord) error
}

// withDefaults returns o with its zero fields set to the defaults.
func (o Options) withDefaults() Options {
	for _, f := range []struct {
		p   *string
		def string
	}{{&o.IDField, "id"}, {&o.TextField, "text"}, {&o.HTMLField, "html"}, {&o.URLField, "url"}} {
		if *f.p == "" {
			*f.p = f.def
		}
	}
	if o.MaxRecordBytes <= 0 {
		o.MaxRecordBytes = DefaultMaxRecordBytes
	}
	return o
}

// Record is one document read from an input. A Record owns its memory: nothing in it is
// reused by later calls, so it may be handed to other goroutines.
type Record struct {
	// ID is unique within a run: the JSONL id field (a string, or a number as written),
	// else "FILE:LINE" (Source.File and Source.Line); the Parquet id column (a string or
	// an integer in decimal), else "FILE:ROW" likewise; the path relative to the directory
	// with forward slashes for a Dir file ("a/b.html.gz"); the WARC-Record-ID without its
	// angle brackets ("urn:uuid:...").
	ID string
	// URL is the JSONL url field or the WARC-Target-URI; empty when unknown.
	URL string
	// Text is plain text, valid UTF-8: the JSONL text field or a .txt file.
	Text string
	// HTML is a page as bytes in its own character set: the JSONL html field, a .html or
	// .htm file, or a WARC response's HTTP body with transfer and content encodings
	// undone. A JSONL record may have both Text and HTML.
	HTML []byte
	// ContentType is the HTTP Content-Type header of a WARC response ("text/html;
	// charset=iso-8859-1"), so that extraction decodes the page's character set; empty
	// otherwise.
	ContentType string
	// Priority is the JSONL priority field, 0 when absent.
	Priority float64
	// FetchTime is the JSONL time field or the WARC-Date; the zero time when absent.
	FetchTime time.Time
	// Source is where the record was read.
	Source Source
}

// Source is where a record is in the inputs.
type Source struct {
	File   string // the input file's path: as given, or joined to the directory given
	Format Format // JSONL, Dir, WARC or Parquet
	Line   int    // JSONL: the line, from 1; Parquet: the row, from 1
	Offset int64  // WARC: the byte offset of the record, or of the gzip member it starts in, in the file as stored
}

// String returns "FILE:LINE" for JSONL, "FILE:ROW" for Parquet, "FILE@OFFSET" for WARC
// and "FILE" for a Dir file.
func (s Source) String() string {
	switch s.Format {
	case JSONL, Parquet:
		return s.File + ":" + strconv.Itoa(s.Line)
	case WARC:
		return s.File + "@" + strconv.FormatInt(s.Offset, 10)
	}
	return s.File
}

// BadRecord is a record that could not be read, and why. Err wraps one of the package's
// sentinel errors (ErrSyntax, ErrField, ErrUTF8, ErrTooLarge, ErrTruncated,
// ErrDuplicateID, ErrEncoding).
type BadRecord struct {
	Source Source
	Err    error
}

// Error returns "FILE:LINE: message", "FILE@OFFSET: message" or "FILE: message".
func (b BadRecord) Error() string { return b.Source.String() + ": " + b.Err.Error() }

// Unwrap returns Err, so that errors.Is sees the sentinel.
func (b BadRecord) Unwrap() error { return b.Err }

// Stats counts what a run has read. Fields grow as Next is called.
type Stats struct {
	Records int64 // records returned by Next (Copy: records read)
	Bad     int64 // bad records, each passed to Options.OnError
	Skipped int64 // WARC records that are not documents (see the package doc) and Dir files without a known extension
	Kept    int64 // Copy only: records written to the output directory
	Removed int64 // Copy only: records written to CopyOptions.Removed
	Bytes   int64 // input bytes consumed so far, as stored (compressed)
	Total   int64 // the sum of the inputs' file sizes, known when Open returns
}

// badf returns a BadRecord error wrapping sentinel with a message.
func badf(sentinel error, format string, args ...any) error {
	return fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))
}
