package engine

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/neardup/neardup/api"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/store"
)

// Record is a document as the engine keeps it: its entry, when it was last seen, and
// its record id. Its binary form is appendRecord's.
type Record struct {
	api.Entry
	// LastSeen is what MaxAge is measured from: the entry's FetchTime (never later than
	// when it was checked), or the last time a URL duplicate of it was checked.
	LastSeen time.Time
	// seq is the document's record id in the store: the order of arrival.
	seq uint64
	// partial marks a record read without its sketch (loadExact).
	partial bool
}

// candidate returns the record as the keep policy sees it.
func (r *Record) candidate() api.Candidate {
	return api.Candidate{ID: r.ID, Priority: r.Priority, FetchTime: r.FetchTime, Seq: r.seq, Words: r.Words}
}

// Namespaces of a detector's postings in its store. They are persisted: never renumber.
const (
	nsDoc  store.Namespace = 1 // document id -> record id
	nsURL  store.Namespace = 2 // canonical URL -> record id
	nsMain store.Namespace = 3 // main-text hash (32 bytes) -> record ids
	nsSeen store.Namespace = 4 // last seen (seenKey) -> record ids
	nsFP   store.Namespace = 5 // SimHash (8 bytes, big-endian) -> record ids
	nsBand store.Namespace = 6 // LSH band key (8 bytes, big-endian) -> record ids
	// nsState holds markers of the store's state: bandsKey -> 1 once every band posting
	// is in the store.
	nsState store.Namespace = 7
	// nsSimTab is a shared store's SimHash index (the in-memory one of a store with one
	// writer would hold only its own process's documents): under each of the
	// permuted tables' keys (simTabKeys), the record ids.
	nsSimTab store.Namespace = 8
)

// bandsKey is the nsState key of the marker that the store holds every band posting.
var bandsKey = []byte("bands")

// metaID is the record id of the detector's meta record (detectorMeta); store.NextID
// never returns it.
const metaID = 0

// appendRecord appends r's binary form: the last-seen time (8 bytes, little-endian Unix nanoseconds) and then the
// entry's (api.Entry.AppendBinary).
func (r *Record) appendRecord(b []byte) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(r.LastSeen.UnixNano()))
	b, _ = r.Entry.AppendBinary(b) // it never fails
	return b
}

// unmarshalRecord reads appendRecord's form into r (but its seq).
func (r *Record) unmarshalRecord(rec []byte, sketch bool) error {
	if len(rec) < 8 {
		return fmt.Errorf("%w: record of %d bytes", api.ErrEncoding, len(rec))
	}
	r.LastSeen = time.Unix(0, int64(binary.LittleEndian.Uint64(rec)))
	if !sketch {
		return r.Entry.UnmarshalWithoutSketch(rec[8:])
	}
	return r.Entry.UnmarshalBinary(rec[8:])
}

// seenKey is the nsSeen key of a last-seen time: Unix nanoseconds with the sign bit
// flipped, big-endian, so that keys sort in time order.
func seenKey(t time.Time) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(t.UnixNano())^1<<63)
}

// seenAt is when a document fetched at fetch counts as seen for MaxAge: its fetch time,
// but never later than now.
func seenAt(fetch, now time.Time) time.Time {
	if fetch.After(now) {
		return now
	}
	return fetch
}

func be64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// load returns the stored document with the record id, or nil when there is none.
func (d *Engine) load(seq uint64) (*Record, error) { return d.loadRecord(seq, true) }

// loadExact is load for a stored document with the main text of the entry being
// checked: its sketch is not decoded, as the two have the same shingles, so that a
// page seen under many URLs does not pay a sketch's decoding for each stored copy. The
// record it returns goes into a verdict, or into the record cache marked partial,
// which only another exact read takes from there; it is never written back.
func (d *Engine) loadExact(seq uint64) (*Record, error) {
	r, epoch := d.recs.getExact(seq)
	if r != nil {
		return r, nil
	}
	r, err := d.loadRecord(seq, false)
	if r != nil {
		r.partial = true
		d.recs.put(seq, r, epoch)
	}
	return r, err
}

func (d *Engine) loadRecord(seq uint64, sketch bool) (*Record, error) {
	rec, ok, err := d.st.Record(seq)
	if err != nil {
		return nil, storeErr(err)
	}
	if !ok {
		return nil, nil
	}
	r := &Record{seq: seq}
	if err := r.unmarshalRecord(rec, sketch); err != nil {
		return nil, fmt.Errorf("neardup: record %d: %w", seq, err)
	}
	return r, nil
}

// byKey returns the stored document posted under (ns, key) for a namespace with at most
// one (nsDoc, nsURL), or nil.
func (d *Engine) byKey(ns store.Namespace, key []byte) (*Record, error) {
	r, _, err := d.byKeyIDs(ns, key)
	return r, err
}

// byKeyIDs is byKey that also returns every id posted under the key: one, or on a
// shared store, more while a race is being settled.
func (d *Engine) byKeyIDs(ns store.Namespace, key []byte) (*Record, []uint64, error) {
	var ids []uint64
	if err := d.st.IDs(ns, key, func(id uint64) bool { ids = append(ids, id); return d.shared }); err != nil {
		return nil, nil, storeErr(err)
	}
	if len(ids) == 0 {
		return nil, nil, nil
	}
	r, err := d.load(ids[0])
	return r, ids, err
}

// indexed reports whether a stored entry is in the near-duplicate postings.
func (d *Engine) indexed(e *api.Entry) bool { return e.Words >= d.cfg.MinWords }

// bandKeysOf returns the LSH band keys an entry is posted under: none when it is not
// indexed or has a signature of another size.
func (d *Engine) bandKeysOf(e *api.Entry) []uint64 {
	if !d.indexed(e) || len(e.MinHash) != d.cfg.MinHashK {
		return nil
	}
	return lsh.AppendBandKeys(nil, e.MinHash, d.bands, d.rows)
}

// maxSimTables bounds the SimHash tables of a shared store: each is a posting an add
// writes and a check reads.
const maxSimTables = 64

// simTabKeys returns the nsSimTab keys of an entry on a shared store: for each table,
// its number and the table's prefix of the permuted SimHash; none when the engine
// keeps no SimHash tables or the entry is not indexed.
func (d *Engine) simTabKeys(e *api.Entry) [][]byte {
	if d.perms == nil || !d.indexed(e) {
		return nil
	}
	keys := make([][]byte, len(d.perms))
	for i, p := range d.perms {
		keys[i] = binary.BigEndian.AppendUint64([]byte{byte(i)}, p.Apply(e.SimHash)&p.SearchMask())
	}
	return keys
}

// putOps adds to b the record and postings of r, and returns r's band keys.
func (d *Engine) putOps(b *store.Batch, r *Record) (bandKeys []uint64) {
	b.PutRecord(r.seq, r.appendRecord(nil))
	b.Add(nsDoc, []byte(r.ID), r.seq)
	if r.URL != "" {
		b.Add(nsURL, []byte(r.URL), r.seq)
	}
	b.Add(nsMain, r.Main[:], r.seq)
	b.Add(nsSeen, seenKey(r.LastSeen), r.seq)
	if !d.indexed(&r.Entry) {
		return nil
	}
	if !d.cfg.NoSimHash {
		b.Add(nsFP, be64(r.SimHash), r.seq)
	}
	for _, k := range d.simTabKeys(&r.Entry) {
		b.Add(nsSimTab, k, r.seq)
	}
	bandKeys = d.bandKeysOf(&r.Entry)
	if d.postsBands() {
		for _, k := range bandKeys {
			b.Add(nsBand, be64(k), r.seq)
		}
	}
	return bandKeys
}

// removeOps adds to b the removal of r's record and postings; the caller unindexes r
// once b is written.
func (d *Engine) removeOps(b *store.Batch, r *Record) {
	b.DeleteRecord(r.seq)
	b.Remove(nsDoc, []byte(r.ID), r.seq)
	if r.URL != "" {
		b.Remove(nsURL, []byte(r.URL), r.seq)
	}
	b.Remove(nsMain, r.Main[:], r.seq)
	b.Remove(nsSeen, seenKey(r.LastSeen), r.seq)
	if !d.indexed(&r.Entry) {
		return
	}
	if !d.cfg.NoSimHash {
		b.Remove(nsFP, be64(r.SimHash), r.seq)
	}
	for _, k := range d.simTabKeys(&r.Entry) {
		b.Remove(nsSimTab, k, r.seq)
	}
	if d.postsBands() {
		for _, k := range d.bandKeysOf(&r.Entry) {
			b.Remove(nsBand, be64(k), r.seq)
		}
	}
}
