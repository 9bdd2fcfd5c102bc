package urlnorm

import (
	"fmt"
	"strconv"
)

// Profile selects how far canonicalization goes; each profile merges more URLs than the one
// before it in the order WHATWG, Safe, Aggressive. The zero value is Safe. The package
// documentation lists the steps of each.
type Profile int

const (
	// Safe merges URLs that load the same resource in any browser from any sane server:
	// WHATWG plus http for a missing scheme, percent-encoding decoded to one form, userinfo
	// removed, host dots cleaned up, consecutive slashes collapsed and query parameters
	// sorted. It is urlcanon's semantic canonicalizer.
	Safe Profile = iota
	// Aggressive is Safe plus the steps that are right for nearly every site but not all:
	// https becomes http, a leading "www." (or "www2." and so on) is removed, tracking and
	// session-id parameters are dropped, index pages and trailing slashes are removed and
	// an empty query goes.
	Aggressive
	// WHATWG only parses and serializes as the WHATWG URL Standard does (scheme and host
	// case, default port, dot segments, IDNA, the standard's percent-encode sets), which
	// every browser applies anyway. A relative reference needs a base URL.
	WHATWG
)

var profileNames = [...]string{
	Safe:       "safe",
	Aggressive: "aggressive",
	WHATWG:     "whatwg",
}

// ParseProfile returns the Profile named name: "safe", "aggressive" or "whatwg" (the names
// that String returns). Any other name gives an error wrapping ErrOptions that lists the
// valid names.
func ParseProfile(name string) (Profile, error) {
	for p, n := range profileNames {
		if n == name {
			return Profile(p), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown profile %q; use %q, %q or %q", ErrOptions, name, profileNames[0], profileNames[1], profileNames[2])
}

// valid reports whether p is one of the declared profiles.
func (p Profile) valid() bool {
	return p >= 0 && int(p) < len(profileNames)
}

// String returns the name of p, which ParseProfile accepts, or "Profile(n)" for an
// undeclared value.
func (p Profile) String() string {
	if !p.valid() {
		return "Profile(" + strconv.Itoa(int(p)) + ")"
	}
	return profileNames[p]
}

// MarshalText implements encoding.TextMarshaler with the name of p, so that a Profile can
// be a flag (flag.TextVar) or a JSON field. It fails for an undeclared value.
func (p Profile) MarshalText() ([]byte, error) {
	if !p.valid() {
		return nil, fmt.Errorf("%w: undeclared %v", ErrOptions, p)
	}
	return []byte(profileNames[p]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with ParseProfile.
func (p *Profile) UnmarshalText(text []byte) error {
	v, err := ParseProfile(string(text))
	if err != nil {
		return err
	}
	*p = v
	return nil
}
