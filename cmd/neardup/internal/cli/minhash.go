package cli

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"strconv"

	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
)

var minhashCommand = &command{
	name:    "minhash",
	args:    "[FILE...|-]",
	summary: "compute the MinHash signature of files or lines",
	about: `Writes the MinHash signature of each FILE (standard input when FILE is "-" or there
is none): its set of shingles (normalized, tokenized, word 5-shingles by default, each
hashed from the hashes of its words) summarized as --k 32-bit minima. By default the signature is the K
values as 8 lowercase hex digits each, concatenated, then two spaces and the name, like
sha256sum:

  $ echo 'The quick brown fox jumps over the lazy dog' | neardup minhash --k 4
  8c521f868c521f862cd4f9f42cd4f9f4  -

--json writes one JSON object per line instead, for programs that store signatures:
{"name": ..., "k": K, "seed": S, "unit": ..., "k_shingle": N, "signature": [K integers]}.
(--format json, its old spelling, still works and prints a notice.)

With --lines every line is a document of its own (its "\n" or "\r\n" removed) and the
name is followed by ":" and the line number. Any bytes are accepted, valid UTF-8 or not.
In hex, a name containing a backslash, a newline or a carriage return is escaped, and its
line starts with a backslash, as sha256sum does. A file that cannot be read is reported
on standard error and skipped; the exit code is then 1.

Signatures are comparable only when made with the same --k, --seed and text pipeline
(--unit, --k-shingle, --keep-case and the other text-pipeline flags, which change it as
they change 'neardup dedup'): the fraction of positions where two agree estimates the Jaccard similarity
of their shingle sets, with a standard error of about sqrt(J(1-J)/K). A document without
shingles (an empty line, only punctuation) gets K copies of ffffffff, and all such
documents look identical. 'neardup compare' shows the estimate next to the exact value.
`,
	new: func() runner { return &minhashCmd{} },
}

// defineSignatureK defines --k, the MinHash signature length, for compare and minhash.
func defineSignatureK(fs *flag.FlagSet, k *int) {
	fs.IntVar(k, "k", minhash.DefaultK, "make MinHash signatures of `K` values, 1 to 4096; the standard error of the\nestimate is about sqrt(J(1-J)/K) (default 128)")
}

// checkSignatureK validates --k as a usage error.
func checkSignatureK(k int) error {
	if k < 1 || k > minhash.MaxK {
		return usagef("--k %d is out of range; use 1 to %d (%d by default)", k, minhash.MaxK, minhash.DefaultK)
	}
	return nil
}

// minhashCmd is "neardup minhash".
type minhashCmd struct {
	features textFlags
	k        int
	seed     uint64
	lines    bool
	json     bool
	format   *deprecatedFlag
}

func (c *minhashCmd) define(fs *flag.FlagSet) {
	defineSignatureK(fs, &c.k)
	fs.Uint64Var(&c.seed, "seed", 0, "seed the MinHash hash function with `S`; signatures of different seeds are\nunrelated (default 0)")
	fs.BoolVar(&c.lines, "lines", false, "make a signature of every line as a document; names become NAME:LINE\n(default false)")
	c.features.define(fs)
	fs.BoolVar(&c.json, "json", false, "write one JSON object per line instead of sha256sum-style hex (default false)")
	c.format = deprecate(fs, "format", "--json", "hex", "write signatures in `FORMAT`: hex or json (default hex)", func(v string) error {
		switch v {
		case "hex", "json":
			c.json = v == "json"
			return nil
		}
		return fmt.Errorf("%q is not a format; use --json, or nothing for hex", v)
	})
}

// minhashRecord is one line of --json.
type minhashRecord struct {
	Name      string            `json:"name"`
	K         int               `json:"k"`
	Seed      uint64            `json:"seed"`
	Unit      shingle.Unit      `json:"unit"`
	KShingle  int               `json:"k_shingle"`
	Signature minhash.Signature `json:"signature"`
}

func (c *minhashCmd) run(e *env, args []string) error {
	if err := checkSignatureK(c.k); err != nil {
		return err
	}
	if err := c.features.check(); err != nil {
		return err
	}
	c.format.warn(e.stderr, "minhash")
	opt := c.features.options(shingle.Uniform)
	opt.Bag = true // a bag has its set's signature, and needs no sort
	s, err := shingle.New(opt)
	if err != nil {
		return err
	}
	h := minhash.Hasher{K: c.k, Seed: c.seed}
	var (
		features []uint64
		sig      minhash.Signature
		digest   []byte
	)
	rec := minhashRecord{K: c.k, Seed: c.seed, Unit: c.features.unit, KShingle: c.features.k()}
	return e.eachFile("minhash", args, func(w *bufio.Writer, name string) error {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return eachDocument(e, name, c.lines, func(text []byte, line int) error {
			features = s.AppendHashes(features[:0], string(text))
			sig = h.AppendSignature(sig[:0], features)
			if !c.json {
				digest = appendHex32(digest[:0], sig)
				return writeSumLine(w, digest, name, line)
			}
			rec.Name, rec.Signature = name, sig
			if line > 0 {
				rec.Name = name + ":" + strconv.Itoa(line)
			}
			if err := enc.Encode(rec); err != nil {
				return &writeError{err}
			}
			return nil
		})
	})
}

// appendHex32 appends each value of sig as 8 lowercase hex digits to dst.
func appendHex32(dst []byte, sig minhash.Signature) []byte {
	const hex = "0123456789abcdef"
	for _, v := range sig {
		for shift := 28; shift >= 0; shift -= 4 {
			dst = append(dst, hex[v>>uint(shift)&0xf])
		}
	}
	return dst
}
