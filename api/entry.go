package api

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/neardup/neardup/minhash"
)

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
	// Sketch is the main text's shingle set kept to verify near candidates by their
	// exact Jaccard similarity (minhash.Sketch); empty when the detector does not verify
	// (neardup.Options.NoVerify, NoMinHash, Near simhash) and in entries stored before
	// version 3.
	Sketch minhash.Sketch `json:"-"`
	// Words is the number of words of the main text after normalization.
	Words int `json:"words"`
	// Title is the page's title when extraction found one.
	Title string `json:"title,omitempty"`
	// Method is how an HTML page's main text was found: extract.MethodMain, or
	// extract.MethodVisibleText (extraction off, found too little, or ran out of time);
	// "" for plain text.
	Method string `json:"method,omitempty"`
}

// Entry is a fingerprinted document as a neardup.Detector takes it: what a
// neardup.Fingerprinter makes of a Document, with the document's id and keep-policy
// fields. Its binary form (AppendBinary) is how a detector's store keeps it.
type Entry struct {
	ID        string
	Priority  float64
	FetchTime time.Time
	// RawURL is the URL as the document gave it, when canonicalization changed it
	// (Fingerprints.URL is the canonical one, the dedup key); "" otherwise.
	RawURL string
	Fingerprints
}

// entryVersion is the first byte of an Entry's binary form. Version 1 had no RawURL,
// and versions 1 and 2 no Sketch; they still decode, with RawURL "" and no sketch.
const entryVersion = 3

// AppendBinary implements encoding.BinaryAppender: it appends the entry in a compact,
// versioned binary form (a version byte, then the fields in declaration order: strings
// and the signature length-prefixed with uvarints, the three hashes raw, numbers
// little-endian or as varints, RawURL since version 2, and last, since version 3, the
// sketch's encoding (minhash.Sketch.AppendBinary) length-prefixed, or a 0 for none) that
// UnmarshalBinary reads back, so that a store can keep
// a document's fingerprints and a restart need not recompute them. FetchTime is kept to
// the nanosecond between the years 1678 and 2262, as UnixNano; the zero time and the Unix
// epoch both read back as the zero time (unknown). The format is frozen (golden test); a
// change gets a new version byte.
func (e Entry) AppendBinary(b []byte) ([]byte, error) {
	// One allocation at most: a sketch makes most of a record's bytes, which append
	// would otherwise copy a few times as b grows.
	b = slices.Grow(b, maxEntrySize(&e))
	b = append(b, entryVersion)
	b = appendString(b, e.ID)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(e.Priority))
	var fetch int64
	if !e.FetchTime.IsZero() {
		fetch = e.FetchTime.UnixNano()
	}
	b = binary.AppendVarint(b, fetch)
	b = appendString(b, e.URL)
	b = append(b, e.Raw[:]...)
	b = append(b, e.Text[:]...)
	b = append(b, e.Main[:]...)
	b = binary.LittleEndian.AppendUint64(b, e.SimHash)
	b = binary.AppendUvarint(b, uint64(len(e.MinHash)))
	for _, v := range e.MinHash {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	b = binary.AppendUvarint(b, uint64(e.Words))
	b = appendString(b, e.Title)
	b = appendString(b, e.Method)
	b = appendString(b, e.RawURL)
	if e.Sketch.Empty() {
		return append(b, 0), nil
	}
	n := len(b)
	b = append(b, 0, 0, 0, 0, 0) // room for the length, a uvarint of at most 5 bytes
	b, _ = e.Sketch.AppendBinary(b)
	return putLength(b, n), nil
}

// maxEntrySize bounds the bytes of e's binary form: a uvarint takes at most 10 bytes,
// and a sketch's hash at most 5.
func maxEntrySize(e *Entry) int {
	return 1 + 8 + 10 + 3*len(e.Raw) + 8 + 6*10 + len(e.ID) + len(e.URL) + len(e.Title) + len(e.Method) + len(e.RawURL) +
		10 + 4*len(e.MinHash) + 5 + 10 + 5*len(e.Sketch.Hashes)
}

// MarshalBinary implements encoding.BinaryMarshaler with AppendBinary's form.
func (e Entry) MarshalBinary() ([]byte, error) { return e.AppendBinary(nil) }

// UnmarshalBinary implements encoding.BinaryUnmarshaler for AppendBinary's form, and
// for versions 1 and 2, which stores hold from before RawURL and Sketch. A truncated, corrupt or
// unknown-version input is an error wrapping ErrEncoding, and e is
// then unchanged. The strings and signature are copied out of data.
func (e *Entry) UnmarshalBinary(data []byte) error { return e.unmarshal(data, true) }

// UnmarshalWithoutSketch is UnmarshalBinary leaving Sketch empty: the sketch's bytes are
// stepped over, not decoded or checked. Decoding a sketch is most of the cost of reading
// an entry back, and a reader that does not compare by it (an exact copy of a document
// has that document's sketch) need not pay it. An entry read so must not be written
// back, or its sketch is lost.
func (e *Entry) UnmarshalWithoutSketch(data []byte) error { return e.unmarshal(data, false) }

// unmarshal is UnmarshalBinary, decoding the sketch only when sketch is true.
func (e *Entry) unmarshal(data []byte, sketch bool) error {
	d := decoder{b: data}
	version := d.u8()
	if version < 1 || version > entryVersion {
		if d.err == nil {
			d.err = fmt.Errorf("version %d, want 1 to %d", version, entryVersion)
		}
		return fmt.Errorf("%w: %v", ErrEncoding, d.err)
	}
	var x Entry
	x.ID = d.str()
	if x.Priority = math.Float64frombits(d.u64()); math.IsNaN(x.Priority) {
		d.fail(fmt.Errorf("priority NaN")) // refused when stored: see neardup.Detector.CheckEntry
	}
	if fetch := d.varint(); fetch != 0 {
		x.FetchTime = time.Unix(0, fetch)
	}
	x.URL = d.str()
	d.hash(&x.Raw)
	d.hash(&x.Text)
	d.hash(&x.Main)
	x.SimHash = d.u64()
	if n := d.uvarint(); n > 0 {
		if n > minhash.MaxK || n*4 > uint64(len(d.b)) {
			d.fail(fmt.Errorf("signature of %d values", n))
		} else {
			x.MinHash = make(minhash.Signature, n)
			for i := range x.MinHash {
				x.MinHash[i] = binary.LittleEndian.Uint32(d.b[4*i:])
			}
			d.b = d.b[4*n:]
		}
	}
	words := d.uvarint()
	if words > math.MaxInt32 {
		d.fail(fmt.Errorf("%d words", words))
	}
	x.Words = int(words)
	x.Title = d.str()
	x.Method = d.str()
	if version >= 2 {
		x.RawURL = d.str()
	}
	if version >= 3 {
		if p := d.take(d.uvarint()); len(p) > 0 && sketch {
			if err := x.Sketch.UnmarshalBinary(p); err != nil {
				d.fail(err)
			}
		}
	}
	if d.err == nil && len(d.b) > 0 {
		d.fail(fmt.Errorf("%d bytes after the entry", len(d.b)))
	}
	if d.err != nil {
		return fmt.Errorf("%w: %v", ErrEncoding, d.err)
	}
	*e = x
	return nil
}

// putLength moves what follows the 5 bytes reserved at b[at:] to just after the uvarint
// of its length, written at b[at], and returns the shortened slice: the length of a field
// written in place, before it was known.
func putLength(b []byte, at int) []byte {
	body := len(b) - at - 5
	var l [5]byte
	k := binary.PutUvarint(l[:], uint64(body))
	copy(b[at:], l[:k])
	copy(b[at+k:], b[at+5:])
	return b[:at+k+body]
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// decoder reads AppendBinary's fields; after the first error every read returns zero.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err, d.b = err, nil
	}
}

func (d *decoder) take(n uint64) []byte {
	if d.err != nil || n > uint64(len(d.b)) {
		d.fail(fmt.Errorf("truncated"))
		return nil
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p
}

func (d *decoder) u8() byte {
	if p := d.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (d *decoder) u64() uint64 {
	if p := d.take(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(fmt.Errorf("bad uvarint"))
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(fmt.Errorf("bad varint"))
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string { return string(d.take(d.uvarint())) }

func (d *decoder) hash(h *Hash) { copy(h[:], d.take(uint64(len(h)))) }
