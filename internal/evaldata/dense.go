package evaldata

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/neardup/neardup/minhash"
)

// DenseCloud returns n synthetic documents that form one dense cloud of near-duplicates,
// as generated pages do (one template, a few sentences each page changes), and every pair
// whose exact Jaccard similarity by RefShingles (the labels' definition) is at least
// minJaccard, sorted by (A, B). The documents are a template of 40 sentences of 8 to 16
// words from a vocabulary of 5,000, in each of which 1 to 6 sentences are changed: half of
// the changes replace a sentence, half replace one of its words. Pairs of such documents
// share most of their shingles, and their similarities spread from about 0.5 to 1 with
// most of them between 0.6 and 0.9, where a MinHash estimate errs most. The ids are
// "dense-00001" and so on; the result depends only on seed and n. It costs n²/2 exact
// Jaccard merges of about 500 shingles, about a second at n = 1,000.
func DenseCloud(seed uint64, n int, minJaccard float64) ([]Doc, []Pair) {
	r := rand.New(rand.NewPCG(seed, 0xde45e))
	word := func() string {
		const syllables = "ba be bi bo bu da de di do du ka ke ki ko ku la le li lo lu ma me mi mo mu na ne ni no nu ra re ri ro ru sa se si so su ta te ti to tu"
		syl := strings.Fields(syllables)
		k := r.IntN(5000)
		return syl[k%len(syl)] + syl[(k/len(syl))%len(syl)] + syl[(k/len(syl)/len(syl))%len(syl)]
	}
	sentence := func() []string {
		s := make([]string, 8+r.IntN(9))
		for i := range s {
			s[i] = word()
		}
		return s
	}
	template := make([][]string, 40)
	for i := range template {
		template[i] = sentence()
	}
	docs := make([]Doc, n)
	feats := make([][]uint64, n)
	var b strings.Builder
	for d := range docs {
		page := slices.Clone(template)
		for range 1 + r.IntN(6) {
			i := r.IntN(len(page))
			if r.IntN(2) == 0 {
				page[i] = sentence()
			} else {
				page[i] = slices.Clone(page[i])
				page[i][r.IntN(len(page[i]))] = word()
			}
		}
		b.Reset()
		for i, s := range page {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strings.Join(s, " "))
			b.WriteByte('.')
		}
		docs[d] = Doc{ID: fmt.Sprintf("dense-%05d", d+1), Text: b.String()}
		feats[d] = RefShingles(docs[d].Text)
	}
	var pairs []Pair
	for i := range docs {
		for j := i + 1; j < len(docs); j++ {
			if s := minhash.Jaccard(feats[i], feats[j]); s >= minJaccard {
				pairs = append(pairs, Pair{A: docs[i].ID, B: docs[j].ID, Jaccard: s})
			}
		}
	}
	return docs, pairs
}
