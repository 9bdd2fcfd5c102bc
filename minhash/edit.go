package minhash

// MaxEditRunes bounds the work of EditSimilarity: it compares at most the first
// MaxEditRunes runes of each string, so one call costs at most MaxEditRunes^2 = 10^8 cell
// updates (a few hundred milliseconds).
const MaxEditRunes = 10_000

// EditSimilarity returns 1 - d/max(|a|, |b|), where d is the Levenshtein distance between
// a and b counted in runes (insertions, deletions and substitutions of one rune each) and
// |a| is the length in runes. It is 1 for equal strings, including two empty ones, and 0
// for an empty and a non-empty string. Invalid UTF-8 counts as one U+FFFD per bad byte.
//
// It is meant for verifying short texts (titles, snippets, near-identical pages after a
// Jaccard match), not for screening: strings longer than MaxEditRunes runes are truncated
// to their first MaxEditRunes runes, so the result then describes those prefixes. The
// common prefix and suffix cost one comparison per rune; what lies between them costs
// O(n·m) time in two rows of O(min(n, m)) memory. It allocates the runes of both strings
// and the rows.
func EditSimilarity(a, b string) float64 {
	if a == b {
		return 1
	}
	ra, rb := runesUpTo(a), runesUpTo(b)
	n := max(len(ra), len(rb))
	if n == 0 {
		return 1
	}
	return 1 - float64(levenshtein(ra, rb))/float64(n)
}

// runesUpTo returns the first MaxEditRunes runes of s.
func runesUpTo(s string) []rune {
	r := make([]rune, 0, min(len(s), MaxEditRunes))
	for _, c := range s {
		if len(r) == MaxEditRunes {
			break
		}
		r = append(r, c)
	}
	return r
}

// levenshtein returns the edit distance between a and b with unit costs.
func levenshtein(a, b []rune) int {
	for len(a) > 0 && len(b) > 0 && a[0] == b[0] {
		a, b = a[1:], b[1:]
	}
	for len(a) > 0 && len(b) > 0 && a[len(a)-1] == b[len(b)-1] {
		a, b = a[:len(a)-1], b[:len(b)-1]
	}
	if len(a) < len(b) {
		a, b = b, a
	}
	if len(b) == 0 {
		return len(a)
	}
	// prev[j] is the distance between a[:i] and b[:j]; cur becomes row i+1.
	prev := make([]int32, len(b)+1)
	cur := make([]int32, len(b)+1)
	for j := range prev {
		prev[j] = int32(j)
	}
	for i, ca := range a {
		cur[0] = int32(i + 1)
		for j, cb := range b {
			d := prev[j] // substitution, or a match
			if ca != cb {
				d++
			}
			d = min(d, prev[j+1]+1, cur[j]+1) // deletion, insertion
			cur[j+1] = d
		}
		prev, cur = cur, prev
	}
	return int(prev[len(b)])
}
