// Package mirror finds mirrors: pairs of sites (a host and a path prefix each) that
// carry the same or nearly the same content under the same relative paths, such as
// example.org/docs/15/ and mirror.net/pg/15/, from each page's URL and the SimHash of
// its main text (neardup.Fingerprints.SimHash). A batch run's report lists them
// (neardup dedup --report): a corpus curator drops or keeps a whole mirror at once.
//
//	mirrors, err := mirror.Find(pages, mirror.Options{})
//
// # Caveats
//
// Content repeated on more than a few dozen pages (error pages, a shared licence) votes
// for no mirror: it says nothing about which sites copy which. Pairs of fingerprints
// within Options.Distance come from hamming.FindAll, which is exact.
package mirror

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/hamming"
	"github.com/neardup/neardup/simhash"
)

// Page is what Find knows of a stored document: where it is and a fingerprint
// of its content.
type Page struct {
	// URL is the page's URL, canonical or not; only its host, path and query are used.
	URL string
	// SimHash is the fingerprint of its main text (neardup.Fingerprints.SimHash).
	SimHash uint64
}

// Options configure Find. The zero value means the defaults below.
type Options struct {
	// Distance is the largest SimHash distance of "nearly the same content"; 0 means
	// neardup.DefaultDistance (3), a negative value means equal fingerprints only.
	Distance int
	// MinShared is the fewest paths two sites must share (with a page under both
	// prefixes) to be reported; 0 means 3.
	MinShared int
	// MinScore is the lowest Score reported, in [0, 1]; 0 means 0.5.
	MinScore float64
}

// Mirror is a pair of sites, each a host and a path prefix, that carry the same content
// under the same relative paths: for example example.org/docs/15/ and
// mirror.net/pg/15/.
type Mirror struct {
	HostA   string `json:"host_a"`
	PrefixA string `json:"prefix_a"`
	HostB   string `json:"host_b"`
	PrefixB string `json:"prefix_b"`
	// Shared is the number of relative paths with a page under both prefixes, and Same
	// how many of them have the same or nearly the same content.
	Shared int `json:"shared"`
	Same   int `json:"same"`
	// Score is Same / Shared: the share of shared paths whose content agrees.
	Score float64 `json:"score"`
	// Coverage is Shared divided by the number of pages under the smaller prefix: how
	// much of the smaller site the pair covers.
	Coverage float64 `json:"coverage"`
}

// mirrorGroupMax bounds the pages of one fingerprint (or one near pair of fingerprints)
// that vote for mirrors: content repeated on more pages than that is boilerplate (empty
// pages, error pages, a shared licence) and says nothing about which sites mirror which.
const mirrorGroupMax = 32

// Find finds pairs of sites where most shared paths carry the same or nearly the
// same content. Every pair of pages on different sites with the same or near content
// votes for the prefixes that remain of their paths once their longest common tail of
// path segments is taken off (a.example/pg/15.18/sql.html and b.example/docs/15.20/sql.html
// vote for a.example/pg/15.18/ and b.example/docs/15.20/); each pair of prefixes with at
// least MinShared votes is then scored over every relative path present under both.
// Mirrors are returned by Same, then Score, descending, then by hosts and prefixes.
//
// It costs one hamming.FindAll over the distinct fingerprints plus a pass over the pages
// of each voted prefix. Pages whose URL does not parse or has no host are ignored.
func Find(pages []Page, opt Options) ([]Mirror, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	ps := newPageSet(pages)
	votes, err := ps.votes(opt.Distance)
	if err != nil {
		return nil, err
	}
	// Pages under each host, for scoring.
	byHost := map[string][]int{}
	for i, s := range ps.locs {
		byHost[s.host] = append(byHost[s.host], i)
	}
	var out []Mirror
	for k, n := range votes {
		if n < opt.MinShared {
			continue
		}
		m := ps.score(k, opt.Distance, byHost)
		if m.Shared > 0 && m.Shared >= opt.MinShared && m.Score >= opt.MinScore {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b Mirror) int {
		return cmp.Or(
			cmp.Compare(b.Same, a.Same), cmp.Compare(b.Score, a.Score),
			cmp.Compare(a.HostA, b.HostA), cmp.Compare(a.PrefixA, b.PrefixA),
			cmp.Compare(a.HostB, b.HostB), cmp.Compare(a.PrefixB, b.PrefixB),
		)
	})
	return out, nil
}

// withDefaults returns the options with every zero field replaced by its default, or an
// error wrapping neardup.ErrOptions naming the fields out of range.
func (opt Options) withDefaults() (Options, error) {
	switch {
	case opt.Distance == 0:
		opt.Distance = neardup.DefaultDistance
	case opt.Distance < 0:
		opt.Distance = 0
	}
	if opt.MinShared == 0 {
		opt.MinShared = 3
	}
	if opt.MinScore == 0 {
		opt.MinScore = 0.5
	}
	if opt.MinShared < 1 || opt.MinScore < 0 || opt.MinScore > 1 {
		return opt, fmt.Errorf("%w: mirror MinShared %d, MinScore %g", neardup.ErrOptions, opt.MinShared, opt.MinScore)
	}
	return opt, nil
}

// site is a page's place: its host, lower case, and its path with the query.
type site struct{ host, path string }

// prefixes is a pair of sites that pages vote for: a host and a path prefix each, in
// order.
type prefixes struct{ hostA, prefixA, hostB, prefixB string }

// pageSet holds each distinct site of the pages once, by index, with the fingerprint of
// its first page.
type pageSet struct {
	locs  []site
	fps   []uint64
	byLoc map[site]int
	byFP  map[uint64][]int // the sites of each fingerprint
}

// newPageSet indexes the pages, ignoring those whose URL does not parse or has no host.
func newPageSet(pages []Page) *pageSet {
	ps := &pageSet{byLoc: map[site]int{}, byFP: map[uint64][]int{}}
	for _, p := range pages {
		u, err := url.Parse(p.URL)
		if err != nil || u.Host == "" {
			continue
		}
		s := site{strings.ToLower(u.Host), u.EscapedPath()}
		if u.RawQuery != "" {
			s.path += "?" + u.RawQuery
		}
		if !strings.HasPrefix(s.path, "/") {
			s.path = "/" + s.path
		}
		if _, dup := ps.byLoc[s]; dup {
			continue
		}
		ps.byLoc[s] = len(ps.locs)
		ps.locs = append(ps.locs, s)
		ps.fps = append(ps.fps, p.SimHash)
		ps.byFP[p.SimHash] = append(ps.byFP[p.SimHash], len(ps.locs)-1)
	}
	return ps
}

// votes counts the votes of every pair of sites with the same fingerprint, or
// fingerprints within distance, for the prefixes left of their paths once their common
// tail is off (see Find), but for groups too large to say anything (mirrorGroupMax).
func (ps *pageSet) votes(distance int) (map[prefixes]int, error) {
	votes := map[prefixes]int{}
	vote := func(i, j int) {
		a, b := ps.locs[i], ps.locs[j]
		if cmp.Or(strings.Compare(a.host, b.host), strings.Compare(a.path, b.path)) > 0 {
			a, b = b, a
		}
		pa, pb := splitTail(a.path, b.path)
		if a.host == b.host && pa == pb {
			return
		}
		votes[prefixes{a.host, pa, b.host, pb}]++
	}
	for _, g := range ps.byFP {
		if len(g) <= mirrorGroupMax {
			for x := range g {
				for y := x + 1; y < len(g); y++ {
					vote(g[x], g[y])
				}
			}
		}
	}
	if distance == 0 {
		return votes, nil
	}
	distinct := make([]uint64, 0, len(ps.byFP))
	for v := range ps.byFP {
		distinct = append(distinct, v)
	}
	pairs, err := hamming.FindAll(distinct, 0, distance)
	if err != nil {
		return nil, fmt.Errorf("%w: mirror Distance %d: %v", neardup.ErrOptions, distance, err)
	}
	for _, pr := range pairs {
		ga, gb := ps.byFP[pr.A], ps.byFP[pr.B]
		if len(ga)*len(gb) <= mirrorGroupMax {
			for _, i := range ga {
				for _, j := range gb {
					vote(i, j)
				}
			}
		}
	}
	return votes, nil
}

// score scores a pair of prefixes over every relative path with a page under both;
// byHost holds the sites of each host.
func (ps *pageSet) score(k prefixes, distance int, byHost map[string][]int) Mirror {
	m := Mirror{HostA: k.hostA, PrefixA: k.prefixA, HostB: k.hostB, PrefixB: k.prefixB}
	underA, underB := 0, 0
	for _, i := range byHost[k.hostB] {
		if strings.HasPrefix(ps.locs[i].path, k.prefixB) {
			underB++
		}
	}
	for _, i := range byHost[k.hostA] {
		rel, ok := strings.CutPrefix(ps.locs[i].path, k.prefixA)
		if !ok {
			continue
		}
		underA++
		j, ok := ps.byLoc[site{k.hostB, k.prefixB + rel}]
		if !ok || j == i {
			continue
		}
		m.Shared++
		if simhash.Distance(ps.fps[i], ps.fps[j]) <= distance {
			m.Same++
		}
	}
	if m.Shared > 0 {
		m.Score = float64(m.Same) / float64(m.Shared)
		m.Coverage = float64(m.Shared) / float64(min(underA, underB))
	}
	return m
}

// splitTail removes the longest common tail of whole path segments from two paths and
// returns what is left of each, ending in "/": ("/a/15/x.html", "/b/16/x.html") gives
// ("/a/15/", "/b/16/").
func splitTail(a, b string) (string, string) {
	i, j := len(a), len(b)
	cut := 0 // how much of the tail, in bytes, is whole common segments
	for i > 0 && j > 0 && a[i-1] == b[j-1] {
		i--
		j--
		if a[i] == '/' {
			cut = len(a) - i - 1
		}
	}
	if i == 0 && j == 0 {
		cut = len(a) - 1 // identical paths: the prefix is "/"
	}
	return a[:len(a)-cut], b[:len(b)-cut]
}
