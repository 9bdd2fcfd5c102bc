package neardup

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/neardup/neardup/hamming"
	"github.com/neardup/neardup/simhash"
)

// Page is what FindMirrors knows of a stored document: where it is and a fingerprint
// of its content.
type Page struct {
	// URL is the page's URL, canonical or not; only its host, path and query are used.
	URL string
	// SimHash is the fingerprint of its main text (Fingerprints.SimHash).
	SimHash uint64
}

// MirrorOptions configure FindMirrors. The zero value means the defaults below.
type MirrorOptions struct {
	// Distance is the largest SimHash distance of "nearly the same content"; 0 means
	// DefaultDistance (3), a negative value means equal fingerprints only.
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

// FindMirrors finds pairs of sites where most shared paths carry the same or nearly the
// same content. Every pair of pages on different sites with the same or near content
// votes for the prefixes that remain of their paths once their longest common tail of
// path segments is taken off (a.example/pg/15.18/sql.html and b.example/docs/15.20/sql.html
// vote for a.example/pg/15.18/ and b.example/docs/15.20/); each pair of prefixes with at
// least MinShared votes is then scored over every relative path present under both.
// Mirrors are returned by Same, then Score, descending, then by hosts and prefixes.
//
// It costs one hamming.FindAll over the distinct fingerprints plus a pass over the pages
// of each voted prefix. Pages whose URL does not parse or has no host are ignored.
func FindMirrors(pages []Page, opt MirrorOptions) ([]Mirror, error) {
	opt.Distance = distanceOption(opt.Distance)
	if opt.MinShared == 0 {
		opt.MinShared = 3
	}
	if opt.MinScore == 0 {
		opt.MinScore = 0.5
	}
	if opt.MinShared < 1 || opt.MinScore < 0 || opt.MinScore > 1 {
		return nil, fmt.Errorf("%w: mirror MinShared %d, MinScore %g", ErrOptions, opt.MinShared, opt.MinScore)
	}

	type site struct{ host, path string }
	var locs []site
	var fps []uint64
	byLoc := map[site]int{}
	byFP := map[uint64][]int{}
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
		if _, dup := byLoc[s]; dup {
			continue
		}
		byLoc[s] = len(locs)
		locs = append(locs, s)
		fps = append(fps, p.SimHash)
		byFP[p.SimHash] = append(byFP[p.SimHash], len(locs)-1)
	}

	type key struct{ hostA, prefixA, hostB, prefixB string }
	votes := map[key]int{}
	vote := func(i, j int) {
		a, b := locs[i], locs[j]
		if cmp.Or(strings.Compare(a.host, b.host), strings.Compare(a.path, b.path)) > 0 {
			a, b = b, a
		}
		pa, pb := splitTail(a.path, b.path)
		if a.host == b.host && pa == pb {
			return
		}
		votes[key{a.host, pa, b.host, pb}]++
	}
	for _, g := range byFP {
		if len(g) <= mirrorGroupMax {
			for x := range g {
				for y := x + 1; y < len(g); y++ {
					vote(g[x], g[y])
				}
			}
		}
	}
	if opt.Distance > 0 {
		distinct := make([]uint64, 0, len(byFP))
		for v := range byFP {
			distinct = append(distinct, v)
		}
		pairs, err := hamming.FindAll(distinct, 0, opt.Distance)
		if err != nil {
			return nil, fmt.Errorf("%w: mirror Distance %d: %v", ErrOptions, opt.Distance, err)
		}
		for _, pr := range pairs {
			ga, gb := byFP[pr.A], byFP[pr.B]
			if len(ga)*len(gb) <= mirrorGroupMax {
				for _, i := range ga {
					for _, j := range gb {
						vote(i, j)
					}
				}
			}
		}
	}

	// Pages under each host, for scoring.
	byHost := map[string][]int{}
	for i, s := range locs {
		byHost[s.host] = append(byHost[s.host], i)
	}
	var out []Mirror
	for k, n := range votes {
		if n < opt.MinShared {
			continue
		}
		m := Mirror{HostA: k.hostA, PrefixA: k.prefixA, HostB: k.hostB, PrefixB: k.prefixB}
		underA, underB := 0, 0
		for _, i := range byHost[k.hostB] {
			if strings.HasPrefix(locs[i].path, k.prefixB) {
				underB++
			}
		}
		for _, i := range byHost[k.hostA] {
			rel, ok := strings.CutPrefix(locs[i].path, k.prefixA)
			if !ok {
				continue
			}
			underA++
			j, ok := byLoc[site{k.hostB, k.prefixB + rel}]
			if !ok || j == i {
				continue
			}
			m.Shared++
			if simhash.Distance(fps[i], fps[j]) <= opt.Distance {
				m.Same++
			}
		}
		if m.Shared == 0 {
			continue
		}
		m.Score = float64(m.Same) / float64(m.Shared)
		m.Coverage = float64(m.Shared) / float64(min(underA, underB))
		if m.Shared >= opt.MinShared && m.Score >= opt.MinScore {
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
