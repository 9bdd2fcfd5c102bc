package dedup_test

import (
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/dedup"
)

// docs returns a source of four documents: b copies a in other case, c is a with one
// word changed, d is unrelated.
func docs() dedup.Source {
	base := strings.Fields(strings.Repeat("the quick brown fox jumps over the lazy dog while seven wise owls watch ", 4))
	for i := range base {
		base[i] += fmt.Sprint(i) // distinct words, so that shingles are distinct
	}
	near := append([]string(nil), base...)
	near[20] = "changed"
	list := []neardup.Document{
		{ID: "a", Text: strings.Join(base, " ")},
		{ID: "b", Text: strings.ToUpper(strings.Join(base, " "))},
		{ID: "c", Text: strings.Join(near, " ")},
		{ID: "d", Text: "a different text about something else entirely"},
	}
	return func() (neardup.Document, error) {
		if len(list) == 0 {
			return neardup.Document{}, io.EOF
		}
		d := list[0]
		list = list[1:]
		return d, nil
	}
}

func ExampleRun() {
	res, err := dedup.Run(docs(), dedup.Options{}, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range res.Pairs {
		fmt.Println(res.Docs[p.A].ID, res.Docs[p.B].ID, p.Method)
	}
	res.WriteIDs(os.Stdout, false) // the dropped
	// Output:
	// a b exact
	// a c minhash
	// b
	// c
}

func ExampleWriteDir() {
	res, err := dedup.Run(docs(), dedup.Options{Pipeline: neardup.Pipeline{Near: dedup.SimHash}}, nil)
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "dedup-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sum, err := dedup.WriteDir(filepath.Join(dir, "out"), res, dedup.DirOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sum.OutputFiles)
	fmt.Printf("kept %d of %d, %d clusters\n", sum.Kept, sum.Documents, sum.Clusters)
	keep, _ := os.ReadFile(filepath.Join(dir, "out", dedup.FileKeep))
	fmt.Print(string(keep))
	// Output:
	// [clusters.jsonl pairs.jsonl keep.txt drop.txt bad.jsonl report.html summary.json]
	// kept 2 of 4, 1 clusters
	// a
	// d
}
