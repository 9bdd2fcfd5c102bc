package cli

import (
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/shingle"
)

// textFlags are the text-pipeline flags of every command that fingerprints text (dedup,
// eval, check, serve, minhash): one definition, so that one word means one thing in
// every command and a fingerprint made by one command can be compared with another's.
type textFlags struct {
	unit                             shingle.Unit
	kShingle                         int
	keepCase, keepPunct, keepAccents bool
	splitPunct                       bool
	maskNumbers, stopWords, noCJK    bool
}

func (f *textFlags) define(fs *flag.FlagSet) {
	fs.TextVar(&f.unit, "unit", shingle.Words, "make shingles of `UNIT`: words (UAX #29 words, each CJK character one word) or\nchars (code points of the normalized text) (default words)")
	fs.IntVar(&f.kShingle, "k-shingle", 0, "make shingles of `N` units, 1 to 1024 (default 0: the shingle package's\ndefault, 5 words or 5 characters)")
	fs.BoolVar(&f.keepCase, "keep-case", false, "text pipeline: do not fold case (default false)")
	fs.BoolVar(&f.keepPunct, "keep-punct", false, "text pipeline: keep punctuation and symbols (default false)")
	fs.BoolVar(&f.splitPunct, "split-punct", false, "text pipeline: split words at the punctuation inside them (\"a.b\" is two\nwords), as the regular expression \\w+ does (default false)")
	fs.BoolVar(&f.keepAccents, "keep-accents", false, "text pipeline: do not fold accents (default false)")
	fs.BoolVar(&f.maskNumbers, "mask-numbers", false, "text pipeline: make all numbers, dates and times alike (default false)")
	fs.BoolVar(&f.stopWords, "stop-words", false, "text pipeline: remove English stop words (default false)")
	fs.BoolVar(&f.noCJK, "no-cjk", false, "text pipeline: keep CJK runs as UAX #29 words, not one word per character\n(default false)")
}

// check validates the flags as a usage error that says what to change.
func (f *textFlags) check() error {
	switch {
	case f.kShingle < 0:
		return usagef("--k-shingle %d is negative; use 0 (the default) or 1 to %d", f.kShingle, shingle.MaxK)
	case f.kShingle > shingle.MaxK:
		return usagef("--k-shingle %d is too large; use at most %d", f.kShingle, shingle.MaxK)
	}
	return nil
}

// options returns the shingle options of the flags, with weighting w.
func (f *textFlags) options(w shingle.Weighting) shingle.Options {
	return shingle.Options{
		Unit: f.unit, K: f.kShingle, Weighting: w,
		KeepCase: f.keepCase, KeepPunct: f.keepPunct, KeepAccents: f.keepAccents, SplitPunct: f.splitPunct,
		MaskNumbers: f.maskNumbers, RemoveStopWords: f.stopWords, NoCJK: f.noCJK,
	}
}

// changed reports whether any flag but --unit and --k-shingle differs from its default:
// a command whose pipeline only takes the shingle shape says so instead of ignoring it.
func (f *textFlags) changed() bool {
	return f.keepCase || f.keepPunct || f.splitPunct || f.keepAccents || f.maskNumbers || f.stopWords || f.noCJK
}

// k returns the shingle size in effect: --k-shingle, or the package default for the unit.
func (f *textFlags) k() int {
	return (&shingle.Options{Unit: f.unit, K: f.kShingle}).ShingleK()
}

// describe names the shingles, as in "word 5-shingles".
func (f *textFlags) describe() string {
	unit := "word"
	if f.unit == shingle.Chars {
		unit = "character"
	}
	return unit + " " + strconv.Itoa(f.k()) + "-shingles"
}

// outputFlags are --quiet and --verbose, on every command that draws progress.
type outputFlags struct {
	quiet, verbose bool
}

func (f *outputFlags) define(fs *flag.FlagSet) {
	fs.BoolVar(&f.quiet, "quiet", false, "draw no progress and print no summary on standard error; errors are still\nprinted (default false)")
	fs.BoolVar(&f.verbose, "verbose", false, "also print the effective parameters and the time of each stage on\nstandard error (default false)")
}

// check rejects both at once.
func (f *outputFlags) check() error {
	if f.quiet && f.verbose {
		return usagef("--quiet and --verbose contradict each other; give one")
	}
	return nil
}

// showProgress reports whether a progress line belongs on e's standard error: a
// terminal, and no --quiet.
func (f *outputFlags) showProgress(e *env) bool {
	return !f.quiet && e.terminal(e.stderr)
}

// deprecatedFlag is a flag kept under its old name: setting it sets the new spelling,
// and warn then prints a one-line notice that names the new spelling.
type deprecatedFlag struct {
	name, instead string
	def           string // the default, as help states it
	set           func(string) error
	used          bool
}

// deprecate defines --name, whose default is def, as a deprecated spelling of instead,
// set through set.
func deprecate(fs *flag.FlagSet, name, instead, def, usage string, set func(string) error) *deprecatedFlag {
	d := &deprecatedFlag{name: name, instead: instead, def: def, set: set}
	fs.Var(d, name, usage+"\n(deprecated: use "+instead+")")
	return d
}

func (d *deprecatedFlag) String() string {
	if d == nil { // flag.PrintDefaults calls it on a zero value
		return ""
	}
	return d.def
}

func (d *deprecatedFlag) Set(v string) error {
	d.used = true
	return d.set(v)
}

// warn writes the notice to w when the flag was given.
func (d *deprecatedFlag) warn(w io.Writer, cmd string) {
	if d.used {
		fmt.Fprintf(w, "neardup %s: --%s is deprecated and will be removed; use %s\n", cmd, d.name, d.instead)
	}
}

// dedupMethod is a --method flag of a batch run: all, exact, simhash or minhash, the
// names dedup.MethodName gives (the detector's --near takes its own subset).
type dedupMethod neardup.Near

// MarshalText implements encoding.TextMarshaler for flag.TextVar.
func (m dedupMethod) MarshalText() ([]byte, error) {
	return []byte(dedup.MethodName(neardup.Near(m))), nil
}

// UnmarshalText implements encoding.TextUnmarshaler for flag.TextVar.
func (m *dedupMethod) UnmarshalText(text []byte) error {
	v, err := dedup.ParseMethod(string(text))
	*m = dedupMethod(v)
	return err
}
