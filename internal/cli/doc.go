// Package cli implements the neardup command-line tool. cmd/neardup/main.go only calls
// Main with the process's arguments and standard streams, so every command runs, and is
// tested, in-process against any io.Reader and io.Writer.
//
// # Commands
//
//	neardup findall --distance K [--blocks B] [--format json|tsv] [--clusters] [FILE|-]
//	neardup simhash [--scheme neardup|simhash-py] [--lines] [FILE...|-]
//	neardup bench findall --random N --distance K [--blocks B] [--plant RATE] [--json]
//	neardup help [COMMAND]
//	neardup version
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
// # Exit codes
//
//	0  success
//	1  a runtime or input error: an unreadable file, a bad input line, a failed write
//	2  a usage error: an unknown command or flag, a bad flag value or argument, an
//	   impossible table design (hamming.ErrDesign)
//
// Errors are written to the error stream as "neardup COMMAND: message", where the message
// says what to change; usage errors add a line pointing at the command's help.
//
// # Caveats
//
//   - findall holds all fingerprints and all pairs in memory: 8 bytes per fingerprint plus
//     about 16 bytes per pair, plus the search's own copy of the input.
//   - simhash reads each file whole into memory; with --lines it reads one line at a time,
//     and a line may be at most 64 MiB.
//   - Writing to a closed pipe ends the real binary with SIGPIPE, as other Unix tools do;
//     in-process, a failed write is returned as an error (exit code 1).
package cli
