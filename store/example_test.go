package store_test

import (
	"fmt"
	"log"

	"github.com/neardup/neardup/store"
)

func Example() {
	const nsURL store.Namespace = 1
	s := store.NewMemory() // or pebblestore.Open(dir, pebblestore.Options{}), on disk
	defer s.Close()

	var b store.Batch
	for id, url := range []string{"https://a.example/", "https://b.example/", "https://a.example/"} {
		b.PutRecord(uint64(id), []byte(url))
		b.Add(nsURL, []byte(url), uint64(id))
	}
	if err := s.Apply(&b); err != nil {
		log.Fatal(err)
	}
	err := s.IDs(nsURL, []byte("https://a.example/"), func(id uint64) bool {
		fmt.Println("seen as document", id)
		return true
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// seen as document 0
	// seen as document 2
}
