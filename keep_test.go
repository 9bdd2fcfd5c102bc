package neardup

import (
	"errors"
	"testing"
	"time"
)

func TestParseKeepPolicy(t *testing.T) {
	p, err := ParseKeepPolicy("priority, longest,id")
	if err != nil || p.String() != "priority,longest,id" {
		t.Fatalf("%v %v", p, err)
	}
	if _, err := ParseKeepPolicy("priority,newest"); !errors.Is(err, ErrOptions) {
		t.Fatalf("unknown rule: %v", err)
	}
	if KeepPolicy(nil).String() != "priority,first,id" {
		t.Fatal(KeepPolicy(nil).String())
	}
}

// TestKeepPolicyStrict checks that every policy is a strict order on distinct ids: exactly
// one of Prefer(a, b) and Prefer(b, a), and transitivity over all triples.
func TestKeepPolicyStrict(t *testing.T) {
	t0 := time.Unix(0, 0)
	var cs []Candidate
	for i, id := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		cs = append(cs, Candidate{ID: id, Priority: float64(i % 2), FetchTime: t0.Add(time.Duration(i%3) * time.Second), Seq: uint64(8 - i), Words: i % 4})
	}
	for _, p := range []KeepPolicy{nil, {KeepLongest}, {KeepShortest, KeepLastSeen}, {KeepFirstSeen}} {
		for _, a := range cs {
			for _, b := range cs {
				if a.ID == b.ID {
					continue
				}
				if p.Prefer(a, b) == p.Prefer(b, a) {
					t.Fatalf("%v: %s vs %s not strict", p, a.ID, b.ID)
				}
				for _, c := range cs {
					if p.Prefer(a, b) && p.Prefer(b, c) && c.ID != a.ID && !p.Prefer(a, c) {
						t.Fatalf("%v: not transitive on %s %s %s", p, a.ID, b.ID, c.ID)
					}
				}
			}
		}
	}
}
