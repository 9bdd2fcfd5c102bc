package lsh_test

import (
	"sync"
	"testing"

	"github.com/neardup/neardup/internal/evaldata"
)

// evalCache holds debian-doc-versions, loaded once for the tests that share it: per folder,
// the labels' own features of every page and the labelled pairs (see internal/evaldata).
var evalCache struct {
	once sync.Once
	sets []evaldata.Set
	err  error
}

func loadEval(t testing.TB) []evaldata.Set {
	t.Helper()
	evalCache.once.Do(func() {
		root, err := evaldata.Root()
		if err != nil {
			evalCache.err = err
			return
		}
		evalCache.sets, evalCache.err = evaldata.DebianSets(root)
	})
	if evalCache.err != nil {
		t.Fatal(evalCache.err)
	}
	return evalCache.sets
}
