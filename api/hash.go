package api

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/neardup/neardup/minhash"
)

// Hash is a SHA-256 digest: the exact-duplicate key of one level of a document's content.
// Its text form is 64 lower-case hex digits.
type Hash [32]byte

// emptyText is the Hash of the empty text.
var emptyText = Hash(sha256.Sum256(nil))

// Empty reports whether h is the hash of the empty text: the Main of a document whose
// main text is empty once normalized (no content, or a page extraction found nothing
// in). Such a document is an exact duplicate of nothing, as there is nothing to
// compare; neardup.Detector and package dedup both hold to that. It costs a 32-byte compare.
func (h Hash) Empty() bool { return h == emptyText }

// String returns the hash in hex.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// MarshalText implements encoding.TextMarshaler (hex).
func (h Hash) MarshalText() ([]byte, error) { return hex.AppendEncode(nil, h[:]), nil }

// UnmarshalText implements encoding.TextUnmarshaler for 64 hex digits.
func (h *Hash) UnmarshalText(text []byte) error {
	if hex.DecodedLen(len(text)) != len(h) {
		return fmt.Errorf("%w: hash of %d hex digits, want %d", ErrDocument, len(text), 2*len(h))
	}
	if _, err := hex.Decode(h[:], text); err != nil {
		return fmt.Errorf("%w: hash: %v", ErrDocument, err)
	}
	return nil
}

// Fingerprints are everything a neardup.Detector keeps of a document's content and address.
type Fingerprints struct {
	// URL is the canonical URL (package urlnorm), "" when the document has none.
	URL string `json:"url,omitempty"`
	// Raw is the SHA-256 of the bytes as given (the HTML, or the text).
	Raw Hash `json:"raw"`
	// Text is the SHA-256 of the whole page's visible text after normalization (the
	// shingle package's tokens joined by single spaces), so pages that differ only in
	// markup share it.
	Text Hash `json:"text"`
	// Main is the SHA-256 of the main text (boilerplate removed) after the same
	// normalization, so pages that differ only in navigation, headers and the like share
	// it. For plain text it equals Text.
	Main Hash `json:"main"`
	// SimHash is the main text's 64-bit fingerprint (simhash.SchemeNeardup).
	SimHash uint64 `json:"simhash"`
	// MinHash is the signature of the main text's shingle set.
	MinHash minhash.Signature `json:"-"`
	// Words is the number of words of the main text after normalization.
	Words int `json:"words"`
	// Title is the page's title when extraction found one.
	Title string `json:"title,omitempty"`
	// Method is how an HTML page's main text was found: extract.MethodMain, or
	// extract.MethodVisibleText (extraction off, found too little, or ran out of time);
	// "" for plain text.
	Method string `json:"method,omitempty"`
}
