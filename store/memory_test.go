package store_test

import (
	"testing"

	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/storetest"
)

func TestMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		m := store.NewMemory()
		t.Cleanup(func() { m.Close() })
		return m
	})
}
