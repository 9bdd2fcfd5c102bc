package bench

import (
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/neardup/neardup/internal/evaldata"
)

// Corpus makes the synthetic documents of `neardup bench dedup` and `neardup bench
// service`: document i is a function of the seed and i alone, so any document can be
// made on its own, in any order, on any goroutine (each with its own Clone). Some
// documents are planted near copies of earlier ones (Original says which).
//
// A Corpus is not safe for concurrent use (Text reuses scratch buffers); its model is
// read-only, so clones share it.
type Corpus struct {
	m           *evaldata.Markov
	seed        uint64
	size, edits int
	plant       float64
	words       []string // scratch
	buf         []byte
}

// NewCorpus returns the corpus of the seed: documents of about size bytes, a share plant
// of them near copies of earlier ones with edits words replaced. It learns its words from
// the text embedded in the binary (evaldata.SampleTexts), so it needs no file; learning
// takes a few milliseconds.
func NewCorpus(seed uint64, size, edits int, plant float64) *Corpus {
	return &Corpus{m: evaldata.NewMarkov(evaldata.SampleTexts()), seed: seed, size: size, edits: edits, plant: plant}
}

// Clone returns a copy of s with its own scratch buffers, for another goroutine. A nil
// Corpus clones to nil (bench service --html sends pages instead).
func (s *Corpus) Clone() *Corpus {
	if s == nil {
		return nil
	}
	c := *s
	c.words, c.buf = nil, nil
	return &c
}

// Original returns the index of the document that document i copies, or -1.
func (s *Corpus) Original(i int) int {
	r := rand.New(rand.NewPCG(s.seed, uint64(i)<<1|1))
	if i == 0 || r.Float64() >= s.plant {
		return -1
	}
	return r.IntN(i)
}

// Text appends document i's text to dst and returns it: about size bytes, a near copy's
// made from its original's text (made again) with edits words replaced.
func (s *Corpus) Text(dst []byte, i int) []byte {
	o := s.Original(i)
	if o < 0 {
		return s.m.AppendText(dst, rand.New(rand.NewPCG(s.seed, uint64(i)<<1)), s.size)
	}
	s.buf = s.m.AppendText(s.buf[:0], rand.New(rand.NewPCG(s.seed, uint64(o)<<1)), s.size)
	s.words = strings.Fields(string(s.buf))
	r := rand.New(rand.NewPCG(s.seed^0x9e3779b97f4a7c15, uint64(i)))
	for range s.edits {
		s.words[r.IntN(len(s.words))] = "edit" + strconv.Itoa(r.IntN(1000))
	}
	for j, w := range s.words {
		if j > 0 {
			dst = append(dst, ' ')
		}
		dst = append(dst, w...)
	}
	return dst
}
