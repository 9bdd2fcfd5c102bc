package engine

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/neardup/neardup/api"
	"github.com/neardup/neardup/internal/keyfilter"
)

// TestRefill holds the background fill of a larger key filter while documents
// are added, and removed: every key, those the fill reads and those added after it began,
// must be in the filter meanwhile and once it is swapped in, and the adds must not wait
// for the fill.
func TestRefill(t *testing.T) {
	s := openPebble(t, filepath.Join(t.TempDir(), "s"))
	c := testConfig()
	c.Expected = 64
	d := mustOpen(t, s, c)
	release := make(chan struct{})
	d.refillHook = func() { <-release } // the fill holds once it has begun reading
	var releaseOnce sync.Once
	defer releaseOnce.Do(func() { close(release) })

	var fps []api.Fingerprints
	add := func(i int) {
		doc := testDoc{ID: fmt.Sprint(i), URL: fmt.Sprintf("http://h.org/%d", i), Text: fmt.Sprint("text of document ", i)}
		check(t, d, doc)
		fps = append(fps, entry(doc).Fingerprints)
	}
	removed := map[string]bool{} // by URL
	hasAll := func(f *keyfilter.Filter, when string) {
		t.Helper()
		for _, fp := range fps {
			if removed[fp.URL] {
				continue
			}
			if !f.HasURL(fp.URL) || !f.HasExact(fp.Main) {
				t.Fatalf("%s: the key filter lacks the keys of %s", when, fp.URL)
			}
		}
	}
	i := 0
	for ; d.refill == nil; i++ {
		if i == 1000 {
			t.Fatal("1000 documents and no fill of a larger filter began")
		}
		add(i)
	}
	capacity := d.Prescreen().Capacity()
	// gone holds the documents removed, by index in fps.
	var gone []int
	for end := i + 300; i < end; i++ { // 600 keys: several times the full filter's room
		add(i)
		if i%10 == 0 {
			if _, err := d.Remove(fmt.Sprint(i - 5)); err != nil {
				t.Fatal(err)
			}
			gone = append(gone, i-5)
		}
	}
	hasAll(d.Prescreen(), "during the fill")
	// The second fill below reads the store, so its filter may lack the keys of the
	// removed documents; until then every filter had them (a key filter only grows).
	for _, j := range gone {
		removed[fps[j].URL] = true
	}
	releaseOnce.Do(func() { close(release) })
	d.refills.Wait()
	// The keys added during the fill overfill the filter it swaps in, so a second fill
	// follows at once, with no add to start it.
	f := d.Prescreen()
	if f.Capacity() <= 2*capacity || f.Len() >= f.Capacity() {
		t.Fatalf("capacity %d with %d keys after the fills, want more than %d and room to spare", f.Capacity(), f.Len(), 2*capacity)
	}
	hasAll(f, "after the fill")
}
