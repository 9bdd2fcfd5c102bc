package api

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
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
