package shingle

import (
	"encoding/binary"
	"fmt"
	"io"
	"iter"
	"math/bits"

	"github.com/neardup/neardup/internal/mix"
)

// window is how many bytes of raw text are normalized at a time. Both the string and the
// reader paths cut the input into the same windows, so that they give the same features.
const window = 32 << 10

// Feature is a hashed shingle and its weight, as AppendWeighted gives them: what a
// weighted SimHash adds up (simhash.Accumulator.AddWeighted(f.Hash, f.Weight)).
type Feature struct {
	Hash   uint64  // the frozen feature hash (see the package documentation)
	Weight float64 // 1, a count, an IDF or their product, per Options.Weighting
}

// Shingler turns text into features with fixed Options. It keeps its buffers between
// calls, so a reused Shingler hashes text without allocating once its buffers have grown
// to the longest text (for sets) or window seen; the exception is text with combining
// marks or conjoining jamo, whose normalization by x/text allocates once per run of
// them. A Shingler is not safe for concurrent use; make one per goroutine. The zero
// value is not usable: call New.
type Shingler struct {
	opt  Options
	k    int
	z    normalizer
	stop map[string]struct{}

	norm  []byte // normalized text; s.norm[s.np:] is not segmented yet
	np    int
	tok   []byte  // an edited token
	space [1]byte // the unit between words in Chars
	sep   bool    // Chars: a word break is pending
	// plainWords: Words without stop words, so a word without punctuation or digits
	// is pushed as it is.
	plainWords bool

	// uh holds the hashes of the units pushed since the last shingles call, after the
	// last k-1 units before them: each window's units are hashed as segment finds them,
	// and its shingles in one loop afterwards, which keeps both loops tight.
	uh        []uint64
	units     int  // units pushed in this text
	unitsOnly bool // AppendUnitHashes: keep the unit hashes in uh, make no shingles
	noHash    bool // ObserveText: the units go to observe alone, unhashed

	out     []uint64 // the features of the text are out[base:]
	base    int
	yield   func([]byte) bool // Tokens: where units go instead of the window
	observe func([]byte)      // ObserveUnits: sees every unit as it is hashed
	stopped bool

	rbuf []byte // reader path: raw text
	// minCompact is how many hashes AppendHashesReader appends to a set before it
	// first compacts them (sorts them and drops duplicates); after that it compacts
	// whenever the appended hashes reach twice the distinct ones. 1<<20; tests lower it.
	minCompact int
	hashes     []uint64 // AppendWeighted: features before weighting
	sorter     sorter
	distinct   distinct
}

// New returns a Shingler for opt, or an error wrapping ErrOptions that says which option
// to change. It normalizes the stop-word list once, with the same options as the text.
func New(opt Options) (*Shingler, error) {
	if err := opt.validate(); err != nil {
		return nil, err
	}
	s := newShingler(opt)
	if !opt.RemoveStopWords {
		return s, nil
	}
	list := opt.StopWords
	if list == nil {
		list = englishStopWords()
	}
	// Normalize the list as words, with the text's options.
	wopt := opt
	wopt.Unit, wopt.RemoveStopWords, wopt.StopWords = Words, false, nil
	n := newShingler(wopt)
	s.stop = make(map[string]struct{}, len(list))
	for _, w := range list {
		var got []string
		for t := range n.Tokens(w) {
			got = append(got, string(t))
		}
		switch len(got) {
		case 0: // only punctuation: nothing to remove
		case 1:
			s.stop[got[0]] = struct{}{}
		default:
			return nil, fmt.Errorf("%w: stop word %q is %d words after normalization %q; give single words", ErrOptions, w, len(got), got)
		}
	}
	return s, nil
}

func newShingler(opt Options) *Shingler {
	s := &Shingler{opt: opt, k: opt.ShingleK(), space: [1]byte{' '}, minCompact: 1 << 20}
	s.z.init(&opt)
	s.plainWords = opt.Unit == Words && !opt.RemoveStopWords
	return s
}

// Hashes returns the feature hashes of text under opt: AppendHashes with a new
// Shingler. Use a Shingler for many texts.
func Hashes(text string, opt Options) ([]uint64, error) {
	s, err := New(opt)
	if err != nil {
		return nil, err
	}
	return s.AppendHashes(nil, text), nil
}

// AppendHashes appends the feature hashes of text to dst and returns the extended
// slice. As a set (the default) the appended hashes are distinct and sorted in
// ascending order, which costs a radix sort of all the shingles of the text (about a
// fifth of the time of shingling); as a bag they are every shingle, in text order.
// Options.Weighting is ignored. AppendHashes does not keep dst or text, and allocates
// only to grow dst and the Shingler's buffers (see Shingler for the one exception).
func (s *Shingler) AppendHashes(dst []uint64, text string) []uint64 {
	s.begin(dst)
	s.runString(text)
	return s.end()
}

// AppendDistinct appends the distinct feature hashes of text to dst, in the order of
// their first occurrence, and returns the extended slice: the set that AppendHashes
// gives, unsorted, for consumers to which order does not matter (simhash.Compute). It
// finds them with a hash set instead of sorting them (the sort is about a fifth of the
// instructions of word 2-shingling 64 KB of English); the set's table, 16 to 32 bytes
// per shingle, is kept with the Shingler's buffers. Options.Bag and Options.Weighting are ignored. It
// does not keep dst or text, and allocates only to grow dst and the Shingler's buffers
// (see Shingler).
func (s *Shingler) AppendDistinct(dst []uint64, text string) []uint64 {
	s.begin(dst)
	s.runString(text)
	return s.endDistinct()
}

// AppendUnitHashes appends to dst the hash of each unit of text after normalization, in
// order (the units that Tokens yields, each hashed as in the package documentation),
// and returns the extended slice: what shingles of every size are made of. Shinglers
// whose Options differ only in K, Bag, Weighting, Seed and SampleMod find the same
// units, so one pass over a text can serve several of them: AppendShingles and
// AppendDistinctShingles turn the unit hashes into the features that AppendHashes and
// AppendDistinct give for the text. It does not keep dst or text.
func (s *Shingler) AppendUnitHashes(dst []uint64, text string) []uint64 {
	own := s.uh
	s.begin(nil)
	s.uh, s.unitsOnly = dst, true
	s.runString(text)
	out := s.uh
	s.uh, s.unitsOnly = own[:0], false
	s.reset()
	return out
}

// ObserveText runs text through AppendUnitHashes's normalization and segmentation for
// the ObserveUnits callback alone, which it calls with each unit in order: no unit is
// hashed. It is for a caller that wants a text's normalized units (to hash them as one
// text) and not its shingles. It does not keep text.
func (s *Shingler) ObserveText(text string) {
	s.begin(nil)
	s.unitsOnly, s.noHash = true, true
	s.runString(text)
	s.unitsOnly, s.noHash = false, false
	s.reset()
}

// AppendShingles appends to dst the feature hashes of the shingles of a text whose unit
// hashes are units (from AppendUnitHashes), and returns the extended slice: the hashes
// AppendHashes gives for the text. It does not keep dst or units.
func (s *Shingler) AppendShingles(dst, units []uint64) []uint64 {
	s.begin(dst)
	s.emitText(units)
	return s.end()
}

// AppendDistinctShingles is AppendShingles as a set in the order of first occurrence:
// the hashes AppendDistinct gives for the text.
func (s *Shingler) AppendDistinctShingles(dst, units []uint64) []uint64 {
	s.begin(dst)
	s.emitText(units)
	return s.endDistinct()
}

// AppendHashesReader is AppendHashes for the text that r yields until io.EOF. It reads
// in windows of 32 KiB, so memory stays bounded apart from dst (and, for sets, the
// features are compacted as they arrive, so that dst holds little more than the distinct
// features). It gives the same hashes as AppendHashes of the whole text. On a read error
// it returns dst unchanged (its length restored) and the error. It does not keep dst or
// r.
func (s *Shingler) AppendHashesReader(dst []uint64, r io.Reader) ([]uint64, error) {
	s.begin(dst)
	n := len(dst)
	if cap(s.rbuf) < 2*window {
		s.rbuf = make([]byte, 0, 2*window)
	}
	buf := s.rbuf[:0]
	eof := false
	compactAt := len(s.out) + s.minCompact
	for {
		for !eof && len(buf) <= window {
			m, err := r.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+m]
			switch {
			case err == io.EOF:
				eof = true
			case err != nil:
				s.reset()
				return s.out[:n], err
			}
		}
		final := eof && len(buf) <= window
		w := buf[:min(len(buf), window)]
		c := len(w)
		if !final {
			c = cut(&s.z, w)
		}
		feed(s, w[:c], final)
		if final {
			break
		}
		buf = buf[:copy(buf, buf[c:])]
		if !s.opt.Bag && len(s.out) >= compactAt {
			s.out = s.out[:s.base+s.sorter.sortUnique(s.out[s.base:])]
			compactAt = s.base + max(2*(len(s.out)-s.base), s.minCompact)
		}
	}
	s.rbuf = buf[:0]
	return s.end(), nil
}

// AppendWeighted appends the features of text with their weights (Options.Weighting)
// to dst and returns the extended slice: one Feature per distinct shingle, sorted by
// hash, unless Bag is set (then one per shingle in text order, which TF and TFIDF do not
// allow). This is what a weighted SimHash sums; without weights, it is AppendHashes with
// weight 1. It does not keep dst or text.
func (s *Shingler) AppendWeighted(dst []Feature, text string) []Feature {
	s.begin(s.hashes[:0])
	s.runString(text)
	s.flushShort()
	hs := s.out
	s.out = nil
	s.reset()
	if !s.opt.Bag {
		s.sorter.sort(hs)
	}
	for i := 0; i < len(hs); {
		h, n := hs[i], 1
		if !s.opt.Bag {
			for i+n < len(hs) && hs[i+n] == h {
				n++
			}
		}
		var w float64
		switch s.opt.Weighting {
		case Uniform:
			w = 1
		case TF:
			w = float64(n)
		case IDF:
			w = s.opt.IDF.weight(h)
		case TFIDF:
			w = float64(n) * s.opt.IDF.weight(h)
		}
		dst = append(dst, Feature{Hash: h, Weight: w})
		i += n
	}
	s.hashes = hs[:0]
	return dst
}

// Tokens returns an iterator over the units of text after normalization: the words
// (Words) or code points, including the single spaces between words (Chars), that
// shingles are made of. The yielded slice is valid only until the next step of the
// iteration. It is for tests and for showing what a Shingler sees; Tokens must not be
// used while another method of s runs.
func (s *Shingler) Tokens(text string) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		s.begin(nil)
		s.yield = yield
		defer func() {
			s.yield = nil
			s.reset()
		}()
		s.runString(text)
	}
}

// begin prepares for a text whose features are appended to dst.
func (s *Shingler) begin(dst []uint64) {
	s.reset()
	s.out, s.base = dst, len(dst)
}

func (s *Shingler) reset() {
	s.norm, s.np = s.norm[:0], 0
	s.sep, s.stopped = false, false
	s.uh, s.units = s.uh[:0], 0
}

// end finishes the text and returns the features.
func (s *Shingler) end() []uint64 {
	s.flushShort()
	out := s.out
	if !s.opt.Bag {
		out = out[:s.base+s.sorter.sortUnique(out[s.base:])]
	}
	s.out = nil
	s.reset()
	return out
}

// endDistinct finishes the text and returns its distinct features.
func (s *Shingler) endDistinct() []uint64 {
	s.flushShort()
	out := s.out
	out = out[:s.base+s.distinct.unique(out[s.base:])]
	s.out = nil
	s.reset()
	return out
}

// flushShort emits the single shingle of a text with fewer than k units.
func (s *Shingler) flushShort() {
	if s.units < s.k {
		s.emitShort(s.uh[:s.units])
	}
}

// emitShort emits the single shingle of a text whose units, fewer than k, have the
// hashes us; a text of k units or more, or of none, has no such shingle.
func (s *Shingler) emitShort(us []uint64) {
	if len(us) > 0 && len(us) < s.k {
		s.emit(s.hash(us))
	}
}

// runString feeds text in windows, exactly as AppendHashesReader does.
func (s *Shingler) runString(text string) {
	for pos := 0; !s.stopped; {
		w := text[pos:min(len(text), pos+window)]
		final := pos+window >= len(text)
		c := len(w)
		if !final {
			c = cut(&s.z, w)
		}
		feed(s, w[:c], final)
		if final {
			return
		}
		pos += c
	}
}

// feed normalizes and segments one window of raw text.
func feed[T ~string | ~[]byte](s *Shingler, w T, final bool) {
	s.norm = appendNormalized(&s.z, s.norm, w)
	s.segment(final)
	s.shingles()
	s.norm = s.norm[:copy(s.norm, s.norm[s.np:])]
	s.np = 0
}

// push adds the hash of one unit to s.uh (or yields the unit, for Tokens).
func (s *Shingler) push(u []byte) {
	s.units++
	if s.yield != nil {
		if !s.yield(u) {
			s.stopped = true
		}
		return
	}
	if s.observe != nil {
		s.observe(u)
	}
	if !s.noHash {
		s.uh = append(s.uh, unitHash(u))
	}
}

// ObserveUnits makes every later AppendHashes, AppendDistinct, AppendHashesReader and
// AppendWeighted call fn with each unit of the text after normalization, in order, as
// it is hashed: the units Tokens yields, in the same pass that makes the features, for a
// caller that also wants the normalized text (to hash it, to count words). The slice is
// valid only during the call. A nil fn stops observing.
func (s *Shingler) ObserveUnits(fn func(unit []byte)) { s.observe = fn }

// shingles emits the shingle of every run of k unit hashes in s.uh, in order, and keeps
// the last k-1 hashes, which start the next window's first shingles.
func (s *Shingler) shingles() {
	if s.unitsOnly {
		return
	}
	if n := s.emitRuns(s.uh); n > 0 {
		s.uh = s.uh[:copy(s.uh, s.uh[n:])]
	}
}

// emitRuns emits the shingle of every run of k unit hashes in uh, in order, and returns
// how many there are.
func (s *Shingler) emitRuns(uh []uint64) int {
	k := s.k
	if len(uh) < k {
		return 0
	}
	n := len(uh) - k + 1
	for i := range n {
		s.emit(s.hash(uh[i : i+k]))
	}
	return n
}

// emitText emits the shingles of a whole text's unit hashes, the single shingle of a
// text with fewer than k units included.
func (s *Shingler) emitText(units []uint64) {
	s.emitRuns(units)
	s.emitShort(units)
}

// unitHash is the frozen hash of one unit u of n bytes, each 8-byte group read as a
// little-endian number:
//
//   - n < 8: splitmix64(x | n<<56), where x is the n bytes. It is a bijection, so
//     distinct short units (most words) never collide.
//   - n >= 8: h = n; then, for bytes i..i+16 (a, b) with i = 0, 16, 32, ... while more
//     than 16 bytes are left from i, h = mum(a ^ unitP0, b ^ unitP1 ^ h); then the same
//     step for the last 16 bytes, or, when n <= 16, for the first 8 and the last 8
//     (which overlap); the unit hash is splitmix64(h). mum(x, y) is the 128-bit product
//     x*y with its halves XORed, as in wyhash.
//
// It costs a few nanoseconds for a word, against about 20 for XXH64, and TestUnitHash
// checks its avalanche and that a large vocabulary has no collisions.
func unitHash(u []byte) uint64 {
	n := len(u)
	switch {
	case n == 1:
		return byteHash[u[0]] // the characters of Chars, mostly
	case n >= 8:
		return longUnitHash(u)
	}
	var x uint64
	if cap(u) >= 8 {
		// One load of the 8 bytes at u, the ones past its end masked off.
		x = binary.LittleEndian.Uint64(u[:8]) & (1<<(8*n) - 1)
	} else {
		for i := n - 1; i >= 0; i-- {
			x = x<<8 | uint64(u[i])
		}
	}
	return mix.Splitmix64(x | uint64(n)<<56)
}

// byteHash holds unitHash of each one-byte unit.
var byteHash = func() (t [256]uint64) {
	for c := range t {
		t[c] = mix.Splitmix64(uint64(c) | 1<<56)
	}
	return t
}()

// longUnitHash is unitHash for units of 8 bytes or more.
func longUnitHash(u []byte) uint64 {
	n := len(u)
	h := uint64(n)
	i := 0
	for ; n-i > 16; i += 16 {
		h = mum(binary.LittleEndian.Uint64(u[i:])^unitP0, binary.LittleEndian.Uint64(u[i+8:])^unitP1^h)
	}
	last := max(n-16, 0) // the last 16 bytes; for n <= 16, the first 8 and the last 8
	return mix.Splitmix64(mum(binary.LittleEndian.Uint64(u[last:])^unitP0, binary.LittleEndian.Uint64(u[n-8:])^unitP1^h))
}

// Constants of unitHash: wyhash's.
const (
	unitP0 = 0xa0761d6478bd642f
	unitP1 = 0xe7037ed1a0b428db
)

// mum returns the 128-bit product of x and y with its halves XORed.
func mum(x, y uint64) uint64 {
	hi, lo := bits.Mul64(x, y)
	return hi ^ lo
}

// shingleMul is the odd multiplier that chains the unit hashes of a shingle.
const shingleMul = 0x9e3779b97f4a7c15

// hash is the frozen feature hash of the shingle whose units have the hashes us, in
// order: starting from the seed, each unit hash is XORed in and the sum multiplied by
// shingleMul (mod 2^64), and the result goes through mix.Splitmix64. The chain is
// order-sensitive, and the finalizer spreads every bit of it over the feature.
func (s *Shingler) hash(us []uint64) uint64 {
	h := s.opt.Seed
	for _, u := range us {
		h = (h ^ u) * shingleMul
	}
	return mix.Splitmix64(h)
}

// emit appends a feature hash that survives sampling.
func (s *Shingler) emit(h uint64) {
	if m := s.opt.SampleMod; m > 1 && h%m != 0 {
		return
	}
	s.out = append(s.out, h)
}
