package engine

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/api"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/simhash"
	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/pebblestore"
)

// defaultBandMemory is neardup.DefaultBandMemory, the band copy's default budget.
const defaultBandMemory = 512 << 20

// testConfig returns the config of neardup's default options (which the root package's
// tests check through the Detector); tests change the fields they need.
func testConfig() Config {
	return Config{
		Near: NearAny, Distance: 3, Threshold: 0.6, MinHashK: minhash.DefaultK, MinWords: 1,
		MaxMatches: 16, Expected: 1_000_000, FilterRate: 0.01, BandMemory: defaultBandMemory,
		Now: time.Now, Prefer: preferFirst,
	}
}

// preferFirst is neardup.DefaultKeepPolicy for documents without a priority: the first
// to arrive survives, and the smaller id breaks a tie.
func preferFirst(a, b api.Candidate) bool {
	if c := a.FetchTime.Compare(b.FetchTime); c != 0 {
		return c < 0
	}
	if a.Seq != b.Seq {
		return a.Seq < b.Seq
	}
	return a.ID < b.ID
}

// testDoc is a plain-text document, as the engine's tests give them.
type testDoc struct{ ID, URL, Text string }

// entry fingerprints a test document: the word 5-shingles' MinHash signature, the
// SimHash of simhash.SchemeNeardup, and the SHA-256 of the text at every exact level.
// They stand in for neardup.Fingerprinter's (which the engine does not import): the
// engine's tests need fingerprints that near texts share, not the façade's exact ones.
func entry(d testDoc) api.Entry {
	s, err := shingle.New(shingle.Options{})
	if err != nil {
		panic(err)
	}
	e := api.Entry{ID: d.ID, Fingerprints: api.Fingerprints{URL: d.URL}}
	e.Main = sha256.Sum256([]byte(d.Text))
	e.Raw, e.Text = e.Main, e.Main
	e.SimHash = simhash.SchemeNeardup.Fingerprint(d.Text)
	e.MinHash = minhash.Hasher{K: minhash.DefaultK}.Signature(s.AppendHashes(nil, d.Text))
	e.Words = len(strings.Fields(d.Text))
	return e
}

// check adds a test document and returns its verdict.
func check(t testing.TB, d *Engine, doc testDoc) api.Verdict {
	t.Helper()
	v, err := d.Check(entry(doc), true)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// words returns n pseudo-random words from a small vocabulary, deterministic in seed.
func words(seed uint64, n int) []string {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("w%d", r.IntN(5000))
	}
	return out
}

// openPebble opens a pebble store in dir, closed when the test ends.
func openPebble(t testing.TB, dir string) *pebblestore.DB {
	t.Helper()
	s, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// mustOpen opens an engine over s with cfg, failing the test if it cannot.
func mustOpen(tb testing.TB, s store.Store, cfg Config) *Engine {
	tb.Helper()
	d, err := Open(s, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}
