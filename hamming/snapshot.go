package hamming

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"slices"

	"github.com/neardup/neardup/internal/slots"
	"github.com/neardup/neardup/internal/snapfile"
)

// The index snapshot format, version 1, is frozen; all integers are little-endian:
//
//	magic        8 bytes  "NDHAMIDX"
//	version      uint32   1
//	blocks       uint32   IndexOptions.Blocks as resolved (never 0)
//	maxDistance  uint32   IndexOptions.MaxDistance as resolved (never 0)
//	count        uint64   number of records, at most 2^32-1
//	count times: id uint64, fingerprint uint64, in strictly increasing id order
//	checksum     uint32   CRC-32C (Castagnoli) of every byte before it
//
// The tables are not stored: ReadIndex rebuilds them from the records, which is much
// faster than recomputing the fingerprints, and lets the in-memory layout change without
// a new version.
const (
	snapshotMagic   = "NDHAMIDX"
	snapshotVersion = 1
	snapshotHeader  = 4 + 4 + 8 // after the magic and version
	snapshotRecord  = 16
	// snapshotChunk is the records read or written per I/O call (64 KiB).
	snapshotChunk = 4096
)

// WriteTo writes a snapshot of the index to w (see the format above) and returns the
// bytes written; Index implements io.WriterTo. It copies the (id, fingerprint) pairs under
// the read lock, one sequential pass during which Add and Remove wait, then sorts them by
// id and streams them in 64 KiB writes without the lock. The copy costs 16 bytes per
// fingerprint of temporary memory; sorting takes O(n log n), most of the time for random
// ids (less when ids were added in increasing order). A zero Index writes an empty
// snapshot of the default design. Publishing the snapshot atomically (write a temporary file, sync,
// rename) is the caller's job.
func (x *Index) WriteTo(w io.Writer) (int64, error) {
	blocks, k, recs := x.records()
	slices.SortFunc(recs, func(a, b record) int { return cmp.Compare(a.id, b.id) })

	sw := snapfile.NewWriter(w, "hamming", snapshotMagic, snapshotVersion, snapshotChunk*snapshotRecord)
	sw.Buf = binary.LittleEndian.AppendUint32(sw.Buf, uint32(blocks))
	sw.Buf = binary.LittleEndian.AppendUint32(sw.Buf, uint32(k))
	sw.Buf = binary.LittleEndian.AppendUint64(sw.Buf, uint64(len(recs)))
	for _, r := range recs {
		if err := sw.Room(snapshotRecord); err != nil {
			return 0, err
		}
		sw.Buf = binary.LittleEndian.AppendUint64(sw.Buf, r.id)
		sw.Buf = binary.LittleEndian.AppendUint64(sw.Buf, r.fp)
	}
	return sw.Finish()
}

// record is one (id, fingerprint) pair of a snapshot.
type record struct{ id, fp uint64 }

// records returns the design and a copy of the pairs of the index, in slot order, taken
// under the read lock.
func (x *Index) records() (blocks, k int, recs []record) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	c := &x.c
	if c.d == nil {
		return 4, 3, nil
	}
	free := make([]bool, c.slots.Len())
	for _, s := range c.free {
		free[s] = true
	}
	recs = make([]record, 0, c.n)
	for s := range uint32(c.slots.Len()) {
		if !free[s] {
			recs = append(recs, record{c.id(s), c.fp(s)})
		}
	}
	return c.d.blocks, c.d.k, recs
}

// ReadIndex reads a snapshot written by WriteTo and rebuilds the index. It reads exactly
// the snapshot's bytes from r, in 64 KiB reads, so r needs no buffering and may go on
// with other data. A malformed snapshot gives an error wrapping ErrSnapshot: bad magic,
// an unknown version, an impossible design (also wrapping ErrDesign), a count above
// 2^32-1, ids out of order or repeated, truncation or a checksum mismatch; an error from r
// other than EOF is returned wrapped as it is. Memory grows with the records actually read,
// never from the count alone. It costs well under a microsecond per record (about 4s for
// 10M), and the index it builds has no room to grow in its buckets: the least memory for
// an index that is mostly queried, while the first adds lay segments out with room.
func ReadIndex(r io.Reader) (*Index, error) {
	sr := snapfile.NewReader(r, "hamming", ErrSnapshot)
	var hdr [snapshotHeader]byte
	if err := sr.Header(snapshotMagic, snapshotVersion, hdr[:]); err != nil {
		return nil, err
	}
	blocks := binary.LittleEndian.Uint32(hdr[0:])
	k := binary.LittleEndian.Uint32(hdr[4:])
	count := binary.LittleEndian.Uint64(hdr[8:])
	if blocks > Bits || k > Bits {
		// Checked here so that the int conversions below cannot overflow.
		return nil, fmt.Errorf("%w: %w: %d blocks with distance %d", ErrSnapshot, ErrDesign, blocks, k)
	}
	// Validate the design now but build it (permutations, tables) only once the records
	// have passed their checksum, so a short corrupt input allocates little.
	if err := checkIndexDesign(int(blocks), int(k)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSnapshot, err)
	}
	if count > maxSlots {
		return nil, fmt.Errorf("%w: count %d is above the %d fingerprints an index holds", ErrSnapshot, count, uint64(maxSlots))
	}

	n := int(count)
	var sl slots.Store[uint64] // grows with the records read, never from the count alone
	buf := make([]byte, min(n, snapshotChunk)*snapshotRecord)
	last := uint64(0)
	for sl.Len() < n {
		m := min(n-sl.Len(), snapshotChunk)
		chunk := buf[:m*snapshotRecord]
		if err := sr.ReadRecords(chunk, snapshotRecord, sl.Len(), n); err != nil {
			return nil, err
		}
		for i := 0; i < len(chunk); i += snapshotRecord {
			id := binary.LittleEndian.Uint64(chunk[i:])
			fp := binary.LittleEndian.Uint64(chunk[i+8:])
			if sl.Len() > 0 && id <= last {
				what := "out of order"
				if id == last {
					what = "repeated"
				}
				return nil, fmt.Errorf("%w: id %d of record %d is %s: ids must be strictly increasing", ErrSnapshot, id, sl.Len()+1, what)
			}
			sl.Append(id, fp)
			last = id
		}
	}
	if err := sr.Verify(); err != nil {
		return nil, err
	}
	x := &Index{}
	if err := x.c.init(int(blocks), int(k)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSnapshot, err) // unreachable: checked above
	}
	x.c.slots = sl
	x.c.build()
	return x, nil
}
