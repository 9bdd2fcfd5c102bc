package server

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Scope is what a token may do. Write implies read.
type Scope int

const (
	// ScopeNone is no access; routes with it need no token (/healthz, /readyz, /metrics).
	ScopeNone Scope = iota
	// ScopeRead may check documents, read documents, query fingerprints, compare, read
	// stats and the prescreen filter, and open the web page.
	ScopeRead
	// ScopeWrite may also add, batch-add and delete documents.
	ScopeWrite
)

// String returns "none", "read" or "write".
func (s Scope) String() string {
	switch s {
	case ScopeRead:
		return "read"
	case ScopeWrite:
		return "write"
	}
	return "none"
}

// Token is one bearer token and its scope.
type Token struct {
	Scope Scope
	Value string
}

func parseScope(s string) (Scope, bool) {
	switch s {
	case "read":
		return ScopeRead, true
	case "write":
		return ScopeWrite, true
	}
	return ScopeNone, false
}

// ParseTokens reads a token file: one token a line, "SCOPE TOKEN" with SCOPE read or
// write; blank lines and lines starting with # are ignored. A malformed line is an error
// wrapping ErrTokens that names the line (never the token).
func ParseTokens(r io.Reader) ([]Token, error) {
	var out []Token
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("%w: line %d: want \"read TOKEN\" or \"write TOKEN\"", ErrTokens, n)
		}
		scope, ok := parseScope(f[0])
		if !ok {
			return nil, fmt.Errorf("%w: line %d: scope %q: use read or write", ErrTokens, n, f[0])
		}
		out = append(out, Token{scope, f[1]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTokens, err)
	}
	return out, nil
}

// ParseTokensEnv reads the NEARDUP_TOKENS form: comma-separated "SCOPE:TOKEN" items, as
// in "write:tok1,read:tok2". Empty items are ignored.
func ParseTokensEnv(s string) ([]Token, error) {
	var out []Token
	for i, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		sc, tok, ok := strings.Cut(item, ":")
		scope, valid := parseScope(sc)
		if !ok || !valid || tok == "" || strings.ContainsAny(tok, " \t") {
			return nil, fmt.Errorf("%w: item %d: want read:TOKEN or write:TOKEN", ErrTokens, i+1)
		}
		out = append(out, Token{scope, tok})
	}
	return out, nil
}

// tokenSet checks presented tokens against the configured ones in constant time: every
// configured token is compared (by SHA-256, so lengths leak nothing), whatever matches.
type tokenSet struct {
	sums   [][sha256.Size]byte
	scopes []Scope
}

func newTokenSet(tokens []Token) *tokenSet {
	ts := &tokenSet{}
	for _, t := range tokens {
		ts.sums = append(ts.sums, sha256.Sum256([]byte(t.Value)))
		ts.scopes = append(ts.scopes, t.Scope)
	}
	return ts
}

func (ts *tokenSet) empty() bool { return len(ts.sums) == 0 }

// scope returns the largest scope of the presented token, ScopeNone for an unknown one.
func (ts *tokenSet) scope(token string) Scope {
	sum := sha256.Sum256([]byte(token))
	best := ScopeNone
	for i, s := range ts.sums {
		if subtle.ConstantTimeCompare(sum[:], s[:]) == 1 && ts.scopes[i] > best {
			best = ts.scopes[i]
		}
	}
	return best
}

// presented returns the token of the request: "Authorization: Bearer TOKEN", or the
// password of HTTP Basic authentication, which is how a browser sends it for the web page
// (any user name).
func presented(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	if scheme, tok, ok := strings.Cut(h, " "); ok && strings.EqualFold(scheme, "Bearer") {
		tok = strings.TrimSpace(tok)
		return tok, tok != ""
	}
	if _, pw, ok := r.BasicAuth(); ok && pw != "" {
		return pw, true
	}
	return "", false
}
