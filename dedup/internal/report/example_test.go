package report_test

import (
	"fmt"
	"log"
	"math"
	"strings"

	"github.com/neardup/neardup/dedup/internal/report"
	"github.com/neardup/neardup/mirror"
)

func ExampleWrite() {
	found := mirror.Mirror{HostA: "www.postgresql.org", PrefixA: "/docs/15/", HostB: "mirror.example", PrefixB: "/pg/15/",
		Shared: 1200, Same: 1180, Score: 0.98, Coverage: 0.93}
	d := report.Data{
		Title:        "neardup dedup: corpus.jsonl",
		Params:       []report.Field{{Name: "distance", Value: "3"}},
		Summary:      []report.Field{{Name: "documents", Value: "12,345"}},
		ClusterSizes: []report.SizeCount{{Size: 2, Count: 300}, {Size: 3, Count: 70}},
		Scores: report.Histogram{Label: "SimHash distance (bits)", Threshold: math.NaN(),
			Bins: []report.Bin{{Lo: -0.5, Hi: 0.5, Count: 900}, {Lo: 0.5, Hi: 1.5, Count: 60}}},
		Largest: []report.Cluster{{ID: 7, Size: 2,
			Representative: report.Member{ID: "a", Text: "PostgreSQL 15.18 Documentation"},
			Members:        []report.Member{{ID: "b", Score: "1 bit", Text: "PostgreSQL 15.20 Documentation"}}}},
		Mirrors: []report.Mirror{report.Mirror(found)}, // the same fields as mirror.Mirror
	}
	var page strings.Builder
	if err := report.Write(&page, d); err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.Count(page.String(), "<svg"), "plots")
	fmt.Println(strings.Contains(page.String(), "<del>15.18</del>"), strings.Contains(page.String(), "<ins>15.20</ins>"))
	// Output:
	// 2 plots
	// true true
}
