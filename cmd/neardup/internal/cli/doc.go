// Package cli implements the neardup command-line tool. cmd/neardup/main.go only calls
// Main with the process's arguments and standard streams, so every command runs, and is
// tested, in-process against any io.Reader and io.Writer.
//
// # Commands
//
//	neardup findall --distance K [--blocks B] [--tsv] [--clusters] [--verbose] [FILE|-]
//	neardup simhash [--scheme neardup|simhash-py] [--lines] [--json] [TEXT FLAGS] [FILE...|-]
//	neardup minhash [--k K] [--seed S] [--lines] [--json] [TEXT FLAGS] [FILE...|-]
//	neardup compare [--k K] [--scheme neardup|simhash-py] [--json] [--html] [--max-bytes N]
//	                [TEXT FLAGS] A B
//	neardup check [--url U]... [--near R] [--distance K] [--threshold S] [--keep P]
//	              [--no-extract] [--max-bytes N] [--quiet|--verbose] [TEXT FLAGS] FILE...
//	neardup dedup --out DIR [--force] [--method M] [--distance K] [--threshold S] [--keep P]
//	              [--format auto|jsonl|dir|warc] [--id-field F] [--text-field F] ...
//	              [--quiet|--verbose] [TEXT FLAGS] INPUT...|-
//	neardup eval --labels FILE (--pairs FILE | [--method M] ... [TEXT FLAGS] INPUT...)
//	neardup urlnorm [--profile safe|aggressive|whatwg] [--base URL] [--keep-fragment] [--json] [URL...|-]
//	neardup bench findall --random N --distance K [--blocks B] [--plant RATE] [--json]
//	neardup bench service [--addr URL] [--mode add|check|query|mixed] [--clients N]
//	                [--duration D|--requests N] [--rate R] [--batch B] [--start I] [--json]
//	neardup bench service --preload N [--start I] [--addr URL]
//	neardup extract [--json] [--content-type CT] [--url U] [--max-bytes N] [--timeout D]
//	                [--quiet|--verbose] [FILE...|-]
//	neardup serve [--data DIR] [--addr HOST:PORT] [--tokens FILE] [--max-body N] [--max-batch N]
//	              [--max-inflight N] [--timeout D] [--shutdown-timeout D] [--debug-addr HOST:PORT]
//	              [--log-format text|json] [--log-level L] [--near R] [--distance K]
//	              [--threshold S] [--max-age D] [--keep P] [--no-extract] [--min-free N] [TEXT FLAGS]
//	neardup backup (--server URL | --data DIR) --out DIR
//	neardup help [COMMAND]
//	neardup version
//	neardup completion bash|zsh
//
// TEXT FLAGS are the text pipeline's, the same in every command that fingerprints text
// (textFlags): --unit, --k-shingle, --keep-case, --keep-punct, --keep-accents,
// --mask-numbers, --stop-words, --no-cjk. One idea has one spelling: --json for JSON
// output, --format for an input format only, --quiet and --verbose where progress is
// drawn (outputFlags); an old spelling kept for a while prints a notice
// (deprecatedFlag). docs/cli.md lists the conventions.
//
// Each command parses its own flags with the standard flag package; flags may come before
// or after the file arguments, "--" ends the flags, and both -flag and --flag work.
// "neardup COMMAND --help" explains every option and its default.
//
// findall reads one unsigned 64-bit fingerprint per line (decimal, as simhash-cpp's
// simhash-find-all reads them, or 0x-prefixed hex) and writes every pair of distinct values
// within K bits as simhash-cpp writes them: "[a, b]" in decimal, one pair per line, here
// sorted by (a, b).
//
// simhash and minhash write one line per document, sha256sum style: the fingerprint or
// signature in hex, two spaces and the name (NAME:LINE with --lines). compare prints every
// measure of two documents side by side, from exact equality to SimHash distance, as a
// table or one JSON object; its measures are internal/measure's, which the service's
// /v1/compare and web page use too.
//
// serve runs the HTTP service (package server) until SIGTERM or SIGINT; every flag can
// also come from an environment variable NEARDUP_FLAG_NAME, the flag winning. It listens
// before the index is loaded and closes the index after the last request. backup copies
// a store consistently: a running service's through its /v1/admin/backup, or one no
// service holds directly (pebble's checkpoint either way).
//
// urlnorm writes the canonical URL (package urlnorm) of each argument or input line, one
// per line, or with --json one object per input; a URL without a canonical form is
// reported with its argument or line number and the rest are still written.
// extract writes the main text of HTML pages (package extract), gzipped or not, or one JSON
// object per page with its title and metadata.
//
// # Exit codes
//
//	0  success
//	1  a runtime or input error: an unreadable file (or, for compare and extract, one
//	   larger than --max-bytes; for extract, a page it cannot extract), a bad input line,
//	   a failed write
//	2  a usage error: an unknown command or flag, a bad flag value or argument, an
//	   impossible table design (hamming.ErrDesign)
//
// Errors are written to the error stream as "neardup COMMAND: message", naming the
// command once (errorText), where the message says what to change; usage errors add a
// line pointing at the command's help. Progress is drawn on the error stream only when it
// is a terminal (progress).
//
// # Caveats
//
//   - findall holds all fingerprints and all pairs in memory: 8 bytes per fingerprint plus
//     about 16 bytes per pair, plus the search's own copy of the input.
//   - simhash and minhash read each file whole into memory; with --lines they read one
//     line at a time, and a line may be at most 64 MiB.
//   - compare holds both files in memory with their shingles and weights, about 40 bytes
//     per distinct shingle: a 49 MB file of 6 million words peaked at 590 MB of RSS and took
//     2.5 s. --max-bytes (64 MiB by default) bounds it. Edit similarity, which costs O(n·m),
//     is only computed for texts of at most 10000 characters.
//   - Writing to a closed pipe ends the real binary with SIGPIPE, as other Unix tools do;
//     in-process, a failed write is returned as an error (exit code 1).
package cli
