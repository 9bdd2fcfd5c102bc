// Package measure compares two texts by every measure neardup has, side by side: equal
// bytes, equal normalized text, exact Jaccard and containment of the shingle sets, the
// MinHash estimate, the SimHash distance, the cosine of term frequencies and the edit
// similarity. It is the one computation behind `neardup compare` and the service's
// /v1/compare endpoint and web page, so that both faces give the same numbers.
//
//	res, err := measure.Compare(measure.Text{Name: "a", Text: a}, measure.Text{Name: "b", Text: b}, measure.Options{})
//
// # Caveats
//
// Compare costs O(n) in the texts' lengths for every measure but the edit similarity,
// which is O(n·m) and therefore only computed when both texts have at most
// minhash.MaxEditRunes characters (EditSimilarity is nil otherwise).
package measure

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/simhash"
)

// Options choose the shingles and fingerprints of a comparison. The zero value is word
// 5-shingles, 128-value MinHash signatures (seed 0) and the neardup SimHash scheme.
type Options struct {
	// Unit and K are the shingles: words or characters, K units each (0: the shingle
	// package's default for the unit).
	Unit shingle.Unit
	K    int
	// Normalize holds the normalization of the shingles (KeepCase, KeepPunct,
	// KeepAccents, MaskNumbers, RemoveStopWords, NoCJK, NoNFKC), so that a comparison
	// sees the texts as a run with those options does; its Unit, K, Weighting and Bag
	// are ignored. The zero value is the shingle package's default normalization.
	Normalize shingle.Options
	// MinHashK is the signature size; 0 means minhash.DefaultK.
	MinHashK int
	// Scheme makes the SimHash fingerprints; a scheme has its own text pipeline, so Unit
	// and K do not change it. The zero value is simhash.SchemeNeardup.
	Scheme simhash.Scheme
}

// KShingle returns the shingle size in effect: K, or the package default for the unit.
func (o Options) KShingle() int { return (&shingle.Options{Unit: o.Unit, K: o.K}).ShingleK() }

// Text is one side of a comparison.
type Text struct {
	// Name names it in the Result.
	Name string
	// Text is compared as it is: HTML is compared tags and all (extract it first to
	// compare main contents). Any bytes are accepted, valid UTF-8 or not.
	Text string
	// Sum is the SHA-256 of Text when the caller has it already; the zero value means
	// Compare computes it.
	Sum [sha256.Size]byte
}

// Doc describes one of the two texts of a comparison.
type Doc struct {
	Name             string `json:"name"`
	Bytes            int    `json:"bytes"`
	Runes            int    `json:"runes"`
	Tokens           int    `json:"tokens"`
	Features         int    `json:"features"`
	SHA256           string `json:"sha256"`
	NormalizedSHA256 string `json:"normalized_sha256"`
	SimHash          string `json:"simhash"`
}

// Result is every measure of a comparison; its JSON is `neardup compare --json`'s.
type Result struct {
	A               Doc            `json:"a"`
	B               Doc            `json:"b"`
	Unit            shingle.Unit   `json:"unit"`
	KShingle        int            `json:"k_shingle"`
	MinHashK        int            `json:"minhash_k"`
	SimHashScheme   simhash.Scheme `json:"simhash_scheme"`
	RawEqual        bool           `json:"raw_equal"`
	NormalizedEqual bool           `json:"normalized_equal"`
	Jaccard         float64        `json:"jaccard"`
	Intersection    int            `json:"intersection"`
	Union           int            `json:"union"`
	ContainmentAInB float64        `json:"containment_a_in_b"`
	ContainmentBInA float64        `json:"containment_b_in_a"`
	MinHash         float64        `json:"minhash_similarity"`
	MinHashAgree    int            `json:"minhash_agree"`
	SimHashDistance int            `json:"simhash_distance"`
	CosineTF        float64        `json:"cosine_tf"`
	EditSimilarity  *float64       `json:"edit_similarity"` // null when a text is too long
}

// Compare computes every measure of the two texts. It fails only for options out of
// range (a shingle size or signature size the packages refuse). It is safe for
// concurrent use and keeps neither text.
func Compare(a, b Text, opt Options) (*Result, error) {
	k := opt.MinHashK
	if k == 0 {
		k = minhash.DefaultK
	}
	if k < 1 || k > minhash.MaxK {
		return nil, fmt.Errorf("measure: MinHash signature of %d values: use 1 to %d", k, minhash.MaxK)
	}
	// One pass gives both the set and the term frequencies: AppendWeighted yields each
	// distinct shingle once, sorted by hash, the set that AppendHashes yields.
	so := opt.Normalize
	so.Unit, so.K, so.Weighting, so.Bag = opt.Unit, opt.K, shingle.TF, false
	s, err := shingle.New(so)
	if err != nil {
		return nil, err
	}
	h := minhash.Hasher{K: k}
	res := &Result{
		Unit:          opt.Unit,
		KShingle:      opt.KShingle(),
		MinHashK:      k,
		SimHashScheme: opt.Scheme,
	}
	var (
		features [2][]uint64
		weighted [2][]minhash.Weighted
		sigs     [2]minhash.Signature
		fps      [2]uint64
		buf      []shingle.Feature
	)
	for i, d := range []struct {
		doc *Doc
		in  *Text
	}{{&res.A, &a}, {&res.B, &b}} {
		text := d.in.Text
		sum := d.in.Sum
		if sum == [sha256.Size]byte{} {
			h := sha256.New()
			io.WriteString(h, text)
			h.Sum(sum[:0])
		}
		norm, tokens := normalizedSum(s, opt.Unit, text)
		buf = s.AppendWeighted(buf[:0], text)
		features[i] = make([]uint64, len(buf))
		weighted[i] = make([]minhash.Weighted, len(buf))
		for j, f := range buf {
			features[i][j] = f.Hash
			weighted[i][j] = minhash.Weighted(f)
		}
		sigs[i] = h.Signature(features[i])
		fps[i] = opt.Scheme.Fingerprint(text)
		*d.doc = Doc{
			Name:             d.in.Name,
			Bytes:            len(text),
			Runes:            utf8.RuneCountInString(text),
			Tokens:           tokens,
			Features:         len(features[i]),
			SHA256:           hex.EncodeToString(sum[:]),
			NormalizedSHA256: hex.EncodeToString(norm[:]),
			SimHash:          fmt.Sprintf("%016x", fps[i]),
		}
	}
	res.RawEqual = res.A.SHA256 == res.B.SHA256
	res.NormalizedEqual = res.A.NormalizedSHA256 == res.B.NormalizedSHA256
	res.Jaccard = minhash.Jaccard(features[0], features[1])
	res.ContainmentAInB = minhash.Containment(features[0], features[1])
	res.ContainmentBInA = minhash.Containment(features[1], features[0])
	// Containment is |A and B| / |A|, exact in float64 for any set that fits in memory.
	res.Intersection = int(math.Round(res.ContainmentAInB * float64(len(features[0]))))
	res.Union = len(features[0]) + len(features[1]) - res.Intersection
	res.MinHash = minhash.Similarity(sigs[0], sigs[1])
	res.MinHashAgree = int(math.Round(res.MinHash * float64(k)))
	res.SimHashDistance = simhash.Distance(fps[0], fps[1])
	res.CosineTF = minhash.Cosine(weighted[0], weighted[1])
	if res.A.Runes <= minhash.MaxEditRunes && res.B.Runes <= minhash.MaxEditRunes {
		s := minhash.EditSimilarity(a.Text, b.Text)
		res.EditSimilarity = &s
	}
	return res, nil
}

// normalizedSum returns the SHA-256 of the units s makes of text, words joined by single
// spaces or code points as they are (they include the spaces between words), and the
// number of units.
func normalizedSum(s *shingle.Shingler, unit shingle.Unit, text string) (sum [sha256.Size]byte, units int) {
	h := sha256.New()
	for tok := range s.Tokens(text) {
		if units > 0 && unit == shingle.Words {
			h.Write([]byte{' '})
		}
		h.Write(tok)
		units++
	}
	h.Sum(sum[:0])
	return sum, units
}

// Ratio formats a similarity in [0, 1] with four decimals, without rounding a value below
// 1 up to 1.0000 or a value above 0 down to 0.0000.
func Ratio(v float64) string {
	s := strconv.FormatFloat(v, 'f', 4, 64)
	switch {
	case s == "1.0000" && v < 1:
		return ">0.9999"
	case s == "0.0000" && v > 0:
		return "<0.0001"
	}
	return s
}
