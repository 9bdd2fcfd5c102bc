package evaldata

import (
	"math/rand/v2"
	"strings"
)

// Markov is a word-bigram model of real text: each word is followed by a word that
// followed it somewhere in the text it was built from. It makes any amount of synthetic
// text with the vocabulary, word lengths and local word order of real English, and
// different seeds give texts that share few word 5-shingles by chance, so planted copies
// are the only duplicates.
type Markov struct {
	words []string // distinct words, by id
	next  [][]int32
}

// NewMarkov builds the model from texts, split on white space.
func NewMarkov(texts []string) *Markov {
	m := &Markov{}
	ids := map[string]int32{}
	id := func(w string) int32 {
		i, ok := ids[w]
		if !ok {
			i = int32(len(m.words))
			ids[w] = i
			m.words = append(m.words, w)
			m.next = append(m.next, nil)
		}
		return i
	}
	for _, t := range texts {
		prev := int32(-1)
		for w := range strings.FieldsSeq(t) {
			i := id(w)
			if prev >= 0 {
				m.next[prev] = append(m.next[prev], i)
			}
			prev = i
		}
	}
	return m
}

// AppendText appends about n bytes of generated text (whole words, single spaces) to dst.
func (m *Markov) AppendText(dst []byte, r *rand.Rand, n int) []byte {
	if len(m.words) == 0 {
		return dst
	}
	end := len(dst) + n
	w := int32(r.IntN(len(m.words)))
	for len(dst) < end {
		dst = append(dst, m.words[w]...)
		dst = append(dst, ' ')
		if succ := m.next[w]; len(succ) > 0 {
			w = succ[r.IntN(len(succ))]
		} else {
			w = int32(r.IntN(len(m.words)))
		}
	}
	return dst
}
