package hamming

import (
	"fmt"
	"slices"
)

// Cluster is a connected component of the graph whose edges are the reported pairs.
type Cluster struct {
	// ID numbers clusters 0, 1, 2, ... in the order of their smallest member.
	ID int
	// Representative is the member chosen by ClusterOptions.Better (by default the
	// smallest index).
	Representative int
	// Members are the document indices, ascending.
	Members []int
}

// ClusterOptions tunes ClusterDocs. The zero value omits singletons and represents each
// cluster by its smallest document index.
type ClusterOptions struct {
	// Singletons adds a one-member cluster for every document in no pair (upstream's
	// find_clusters omits them).
	Singletons bool
	// Better reports whether document a should represent a cluster rather than document b.
	// It must be a strict order; nil means a < b. Keep policies (priority, first seen,
	// length) plug in here.
	Better func(a, b int) bool
}

// unionFind is a disjoint-set forest over 0..n-1 with union by size and path halving.
type unionFind struct{ parent, size []int32 }

func newUnionFind(n int) *unionFind {
	u := &unionFind{parent: make([]int32, n), size: make([]int32, n)}
	for i := range u.parent {
		u.parent[i], u.size[i] = int32(i), 1
	}
	return u
}

func (u *unionFind) find(x int32) int32 {
	for u.parent[x] != x {
		u.parent[x] = u.parent[u.parent[x]]
		x = u.parent[x]
	}
	return x
}

func (u *unionFind) union(a, b int32) {
	a, b = u.find(a), u.find(b)
	if a == b {
		return
	}
	if u.size[a] < u.size[b] {
		a, b = b, a
	}
	u.parent[b] = a
	u.size[a] += u.size[b]
}

// components returns the sets of u with more than one member (all of them when singletons
// is set), each ascending, ordered by their smallest member.
func (u *unionFind) components(singletons bool) [][]int {
	index := make(map[int32]int)
	var out [][]int
	for i := range u.parent {
		r := u.find(int32(i))
		if u.size[r] == 1 && !singletons {
			continue
		}
		c, ok := index[r]
		if !ok {
			c = len(out)
			index[r] = c
			out = append(out, make([]int, 0, u.size[r]))
		}
		out[c] = append(out[c], i)
	}
	return out
}

// ClusterDocs returns the connected components of n documents linked by pairs (for example
// from Finder.FindAllDocs), with deterministic ids and representatives: the same input
// gives the same clusters in the same order. It panics if a pair names a document outside
// 0..n-1 (a programmer error). Cost: near-linear in n + len(pairs).
func ClusterDocs(n int, pairs []DocPair, opt ClusterOptions) []Cluster {
	u := newUnionFind(n)
	for _, p := range pairs {
		if p.A < 0 || p.B < 0 || p.A >= n || p.B >= n {
			panic(fmt.Sprintf("hamming: ClusterDocs pair %v outside %d documents", p, n))
		}
		u.union(int32(p.A), int32(p.B))
	}
	better := opt.Better
	if better == nil {
		better = func(a, b int) bool { return a < b }
	}
	comps := u.components(opt.Singletons)
	out := make([]Cluster, len(comps))
	for i, members := range comps {
		rep := members[0]
		for _, m := range members[1:] {
			if better(m, rep) {
				rep = m
			}
		}
		out[i] = Cluster{ID: i, Representative: rep, Members: members}
	}
	return out
}

// ClusterValues returns the connected components of the fingerprint values linked by pairs
// (for example from FindAll), like upstream's find_clusters: each cluster ascending,
// clusters ordered by their smallest value, values in no pair omitted.
func ClusterValues(pairs []Pair) [][]uint64 {
	vals := make([]uint64, 0, 2*len(pairs))
	for _, p := range pairs {
		vals = append(vals, p.A, p.B)
	}
	slices.Sort(vals)
	vals = slices.Compact(vals)
	u := newUnionFind(len(vals))
	for _, p := range pairs {
		a, _ := slices.BinarySearch(vals, p.A)
		b, _ := slices.BinarySearch(vals, p.B)
		u.union(int32(a), int32(b))
	}
	comps := u.components(false)
	out := make([][]uint64, len(comps))
	for i, c := range comps {
		out[i] = make([]uint64, len(c))
		for j, m := range c {
			out[i][j] = vals[m]
		}
	}
	return out
}
