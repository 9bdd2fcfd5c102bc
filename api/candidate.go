package api

import "time"

// Candidate is what a neardup.KeepPolicy compares of a document to choose the survivor
// of a group of duplicates.
type Candidate struct {
	ID        string
	Priority  float64
	FetchTime time.Time // the zero time sorts first
	Seq       uint64    // arrival order, deciding FetchTime ties
	Words     int       // words of main text
}
