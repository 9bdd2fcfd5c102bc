package lsh

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/neardup/neardup/internal/slots"
	"github.com/neardup/neardup/internal/snapfile"
	"github.com/neardup/neardup/minhash"
)

// The index snapshot format, version 1, is frozen; all integers are little-endian:
//
//	magic      8 bytes  "NDLSHIDX"
//	version    uint32   1
//	k          uint32   Options.K as resolved, 1..minhash.MaxK
//	bands      uint32   Options.Bands as resolved
//	rows       uint32   Options.Rows as resolved; bands*rows <= k
//	threshold  float64  Options.Threshold as resolved, IEEE 754 bits, in (0, 1]
//	fpWeight   float64  Options.FPWeight as resolved
//	fnWeight   float64  Options.FNWeight as resolved
//	count      uint64   number of records, at most 2^32-1
//	count times: id uint64, then k values uint32, in strictly increasing id order
//	checksum   uint32   CRC-32C (Castagnoli) of every byte before it
//
// The band tables are not stored: Read rebuilds them from the signatures, which is cheap
// next to recomputing signatures, and lets the in-memory layout change without a new
// version. The minhash Hasher's seed is not recorded (a signature does not know it).
const (
	snapshotMagic   = "NDLSHIDX"
	snapshotVersion = 1
	snapshotHeader  = 4 + 4 + 4 + 8 + 8 + 8 + 8 // after the magic and version
	// snapshotBuffer is the size of the reads and writes of a snapshot (64 KiB).
	snapshotBuffer = 64 << 10
)

// WriteTo writes a snapshot of the index to w (see the format above) and returns the
// bytes written; Index implements io.WriterTo. It streams in 64 KiB writes, holding the
// read lock throughout, so Add and Remove wait for it while queries go on. It sorts the
// ids, using 8 bytes per signature of temporary memory. A zero Index writes an empty
// snapshot with the zero Options. Publishing the snapshot atomically (write a temporary
// file, sync, rename) is the caller's job.
func (x *Index) WriteTo(w io.Writer) (int64, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	c := &x.c
	o := c.opt
	if o.K == 0 {
		o = zeroOptions()
	}
	ids := make([]uint64, 0, c.n)
	for _, s := range c.idTab {
		if s != 0 {
			ids = append(ids, c.id(s-1))
		}
	}
	slices.Sort(ids)

	record := 8 + 4*o.K
	sw := snapfile.NewWriter(w, "lsh", snapshotMagic, snapshotVersion, max(snapshotBuffer, 12+snapshotHeader, record))
	le := binary.LittleEndian
	sw.Buf = le.AppendUint32(sw.Buf, uint32(o.K))
	sw.Buf = le.AppendUint32(sw.Buf, uint32(o.Bands))
	sw.Buf = le.AppendUint32(sw.Buf, uint32(o.Rows))
	sw.Buf = le.AppendUint64(sw.Buf, math.Float64bits(o.Threshold))
	sw.Buf = le.AppendUint64(sw.Buf, math.Float64bits(o.FPWeight))
	sw.Buf = le.AppendUint64(sw.Buf, math.Float64bits(o.FNWeight))
	sw.Buf = le.AppendUint64(sw.Buf, uint64(len(ids)))
	for _, id := range ids {
		if err := sw.Room(record); err != nil {
			return 0, err
		}
		_, slot, _ := c.find(id)
		sw.Buf = le.AppendUint64(sw.Buf, id)
		for _, v := range c.sig(slot) {
			sw.Buf = le.AppendUint32(sw.Buf, v)
		}
	}
	return sw.Finish()
}

// Read reads a snapshot written by WriteTo and rebuilds the index. It reads exactly the
// snapshot's bytes from r, in reads of about 64 KiB, so r needs no buffering and may go on
// with other data. A malformed snapshot gives an error wrapping ErrSnapshot: bad magic, an
// unknown version, options New would refuse (also wrapping ErrOptions), a count above
// 2^32-1, ids out of order or repeated, truncation or a checksum mismatch; an error from r
// other than EOF is returned wrapped as it is. Memory grows with the records actually
// read, never from the count alone. It costs about as much as adding every signature.
func Read(r io.Reader) (*Index, error) {
	sr := snapfile.NewReader(r, "lsh", ErrSnapshot)
	var hdr [snapshotHeader]byte
	if err := sr.Header(snapshotMagic, snapshotVersion, hdr[:]); err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	k, bands, rows := le.Uint32(hdr[0:]), le.Uint32(hdr[4:]), le.Uint32(hdr[8:])
	o := Options{
		Threshold: math.Float64frombits(le.Uint64(hdr[12:])),
		FPWeight:  math.Float64frombits(le.Uint64(hdr[20:])),
		FNWeight:  math.Float64frombits(le.Uint64(hdr[28:])),
	}
	count := le.Uint64(hdr[36:])
	if k == 0 || k > minhash.MaxK || bands == 0 || rows == 0 || bands > k || rows > k {
		// Checked here so that the int conversions below cannot overflow and no field is
		// left to a default.
		return nil, fmt.Errorf("%w: %w: K = %d with %d bands of %d rows", ErrSnapshot, ErrOptions, k, bands, rows)
	}
	o.K, o.Bands, o.Rows = int(k), int(bands), int(rows)
	if o.Threshold == 0 || o.FPWeight == 0 && o.FNWeight == 0 {
		return nil, fmt.Errorf("%w: %w: threshold %v and weights %v, %v are not resolved", ErrSnapshot, ErrOptions, o.Threshold, o.FPWeight, o.FNWeight)
	}
	if ro, err := o.resolve(); err != nil || ro != o {
		return nil, fmt.Errorf("%w: %w", ErrSnapshot, cmpErr(err, ErrOptions))
	}
	if count > maxSlots {
		return nil, fmt.Errorf("%w: count %d is above the %d signatures an index holds", ErrSnapshot, count, uint64(maxSlots))
	}

	n := int(count)
	record := 8 + 4*o.K
	per := max(1, snapshotBuffer/record) // records per read
	sl := slots.New[uint32](o.K)         // grows with the records read, never from the count alone
	buf := make([]byte, min(n, per)*record)
	sig := make(minhash.Signature, o.K)
	last := uint64(0)
	for sl.Len() < n {
		m := min(n-sl.Len(), per)
		chunk := buf[:m*record]
		if err := sr.ReadRecords(chunk, record, sl.Len(), n); err != nil {
			return nil, err
		}
		for ; len(chunk) > 0; chunk = chunk[record:] {
			id := le.Uint64(chunk)
			if sl.Len() > 0 && id <= last {
				what := "out of order"
				if id == last {
					what = "repeated"
				}
				return nil, fmt.Errorf("%w: id %d of record %d is %s: ids must be strictly increasing", ErrSnapshot, id, sl.Len()+1, what)
			}
			for i := range sig {
				sig[i] = le.Uint32(chunk[8+4*i:])
			}
			sl.AppendRow(id, sig)
			last = id
		}
	}
	if err := sr.Verify(); err != nil {
		return nil, err
	}
	x := &Index{}
	x.c.init(o)
	x.c.slots = sl
	x.c.build()
	return x, nil
}

// cmpErr returns err, or a description of an options mismatch wrapping sentinel when err
// is nil (resolve accepted the options but would change them).
func cmpErr(err, sentinel error) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("%w: options are not in resolved form", sentinel)
}
