package neardup

import (
	"fmt"
	"strings"

	"github.com/neardup/neardup/internal/names"
)

// KeepRule is one criterion of a KeepPolicy.
type KeepRule int

const (
	// KeepPriority prefers the higher Document.Priority.
	KeepPriority KeepRule = iota + 1
	// KeepFirstSeen prefers the document fetched first (Document.FetchTime, then the
	// order in which documents reached the detector).
	KeepFirstSeen
	// KeepLastSeen prefers the document fetched last.
	KeepLastSeen
	// KeepLongest prefers the document with more words of main text.
	KeepLongest
	// KeepShortest prefers the document with fewer words of main text.
	KeepShortest
	// KeepSmallestID prefers the smaller id (byte-wise). It decides every tie, so a
	// policy always names one survivor.
	KeepSmallestID
)

var keepNames = names.Names{
	KeepPriority:   "priority",
	KeepFirstSeen:  "first",
	KeepLastSeen:   "last",
	KeepLongest:    "longest",
	KeepShortest:   "shortest",
	KeepSmallestID: "id",
}

// String returns the rule's name as ParseKeepPolicy reads it.
func (r KeepRule) String() string { return keepNames.Of(int(r), "KeepRule") }

// KeepPolicy chooses which of a group of duplicates survives: the rules are applied in
// order until one prefers a document, and the smallest id decides what they leave tied.
// The zero value (nil) is DefaultKeepPolicy.
type KeepPolicy []KeepRule

// DefaultKeepPolicy keeps the highest priority, then the first seen, then the smallest id.
var DefaultKeepPolicy = KeepPolicy{KeepPriority, KeepFirstSeen, KeepSmallestID}

// ParseKeepPolicy reads a comma-separated list of rule names: "priority", "first",
// "last", "longest", "shortest", "id"; for example "priority,first".
func ParseKeepPolicy(s string) (KeepPolicy, error) {
	var p KeepPolicy
	for name := range strings.SplitSeq(s, ",") {
		name = strings.TrimSpace(name)
		r, ok := keepNames.Parse(name)
		if !ok {
			return nil, fmt.Errorf("%w: unknown keep rule %q: use priority, first, last, longest, shortest or id", ErrOptions, name)
		}
		p = append(p, KeepRule(r))
	}
	return p, nil
}

// String returns the policy as ParseKeepPolicy reads it.
func (p KeepPolicy) String() string {
	if p == nil {
		p = DefaultKeepPolicy
	}
	names := make([]string, len(p))
	for i, r := range p {
		names[i] = r.String()
	}
	return strings.Join(names, ",")
}

func (p KeepPolicy) validate() error {
	for _, r := range p {
		if !keepNames.Valid(int(r)) {
			return fmt.Errorf("%w: %v", ErrOptions, r)
		}
	}
	return nil
}

// Prefer reports whether the policy keeps a rather than b. It is a strict order: for
// candidates with different ids exactly one of Prefer(a, b) and Prefer(b, a) is true.
func (p KeepPolicy) Prefer(a, b Candidate) bool {
	if p == nil {
		p = DefaultKeepPolicy
	}
	for _, r := range p {
		switch r {
		case KeepPriority:
			if a.Priority != b.Priority {
				return a.Priority > b.Priority
			}
		case KeepFirstSeen, KeepLastSeen:
			c := a.FetchTime.Compare(b.FetchTime)
			if c == 0 && a.Seq != b.Seq {
				c = -1
				if a.Seq > b.Seq {
					c = 1
				}
			}
			if c != 0 {
				return (c < 0) == (r == KeepFirstSeen)
			}
		case KeepLongest:
			if a.Words != b.Words {
				return a.Words > b.Words
			}
		case KeepShortest:
			if a.Words != b.Words {
				return a.Words < b.Words
			}
		case KeepSmallestID:
			if a.ID != b.ID {
				return a.ID < b.ID
			}
		}
	}
	return a.ID < b.ID
}
