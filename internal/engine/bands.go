package engine

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/neardup/neardup/store"
)

// loadAccelerators fills sim from the SimHash postings, and the band filter and copy
// from the band postings or, when the store does not hold them, from the records. When
// the copy cannot hold them, it first writes them to the store.
func (d *Engine) loadAccelerators() error {
	var ids, fps []uint64
	flush := func() {
		d.sim.AddBatch(ids, fps)
		ids, fps = ids[:0], fps[:0]
	}
	err := d.st.Postings(nsFP, func(key []byte, seq uint64) bool {
		if len(key) == 8 {
			ids, fps = append(ids, seq), append(fps, binary.BigEndian.Uint64(key))
			if len(ids) == 1<<16 {
				flush()
			}
		}
		return true
	})
	if err != nil {
		return storeErr(err)
	}
	flush()
	d.newBands()
	if !d.bandsStored {
		if err := d.loadBandsFromRecords(); err != nil || !d.bandsStored {
			return err
		}
		// The store holds them now: load them as from any such store.
		d.newBands()
	}
	var keys, seqs []uint64
	add := func() {
		d.bandKeys.add(keys)
		d.bandIdx.addPostings(keys, seqs)
		keys, seqs = keys[:0], seqs[:0]
	}
	err = d.st.Postings(nsBand, func(key []byte, seq uint64) bool {
		if len(key) == 8 {
			keys, seqs = append(keys, binary.BigEndian.Uint64(key)), append(seqs, seq)
			if len(keys) == 1<<16 {
				add()
			}
		}
		return true
	})
	add()
	return storeErrOrNil(err)
}

// newBands gives the detector an empty band filter, with room for a quarter more
// documents (past it the filter grows by a layer), and a band copy sized for its
// documents, or none when they would not fit Config.BandMemory.
func (d *Engine) newBands() {
	d.bandKeys = newBandFilter(uint(d.bands * max(d.count, d.cfg.Expected) * 5 / 4))
	d.bandIdx = newBandTable(d.cfg.BandMemory, d.bands*d.count)
}

// loadBandsFromRecords fills a copy that keeps its postings from the band keys of the
// stored records' signatures. When the copy cannot hold them, it writes them to the
// store instead (moveBands) and sets bandsStored.
func (d *Engine) loadBandsFromRecords() error {
	if d.bandIdx != nil {
		d.bandIdx.keep = true
		var keys, seqs []uint64
		err := d.recordBands(func(seq uint64, ks []uint64) bool {
			keys = append(keys, ks...)
			for range ks {
				seqs = append(seqs, seq)
			}
			if len(keys) >= 1<<16 {
				d.bandIdx.addPostings(keys, seqs)
				keys, seqs = keys[:0], seqs[:0]
			}
			return !d.bandIdx.isOver()
		})
		d.bandIdx.addPostings(keys, seqs)
		if err != nil {
			return err
		}
		if !d.bandIdx.isOver() {
			return nil
		}
	}
	return d.storeBands()
}

// storeBands moves the band postings to the store now (moveBands), then records that
// the store holds them and drops the copy.
func (d *Engine) storeBands() error {
	if err := d.moveBands(); err != nil {
		return err
	}
	d.bandsMoved()
	return nil
}

// bandsMoved records that the store holds every band posting, and drops the copy.
func (d *Engine) bandsMoved() {
	d.bandsStored = true
	d.bandIdx.stop()
}

// recordBands calls fn with the band keys of every stored document, in record id order,
// until fn returns false, decoding the records as they were when it started (but for
// their sketches, which band keys do not need).
func (d *Engine) recordBands(fn func(seq uint64, keys []uint64) bool) error {
	var failed error
	err := d.st.Records(func(seq uint64, rec []byte) bool {
		if seq == metaID {
			return true
		}
		var r Record
		if failed = r.unmarshalRecord(rec, false); failed != nil {
			failed = fmt.Errorf("neardup: record %d: %w", seq, failed)
			return false
		}
		return fn(seq, d.bandKeysOf(&r.Entry))
	})
	if err != nil {
		return storeErr(err)
	}
	return failed
}

// moveChunk is how many band postings moveBands writes in one batch.
const moveChunk = 1 << 14

// moveBands writes the band postings of every stored document to the store, and their
// keys to the band filter, makes them durable, then marks the store as holding them
// all. Writes made meanwhile must keep their own band postings in the store (d.moving),
// as it sees the records as they were when it started; it may write postings of
// documents removed meanwhile, which the checks skip, as they find no record. It runs
// without d.mu.
func (d *Engine) moveBands() error {
	var b store.Batch
	var failed error
	err := d.recordBands(func(seq uint64, keys []uint64) bool {
		if d.moveHook != nil {
			d.moveHook()
		}
		for _, k := range keys {
			b.Add(nsBand, be64(k), seq)
		}
		d.bandKeys.add(keys)
		if b.Len() >= moveChunk {
			if failed = d.st.Write(&b); failed != nil {
				return false
			}
			b.Reset()
		}
		return true
	})
	if err == nil && failed != nil {
		err = storeErr(failed)
	}
	if err != nil {
		return err
	}
	b.Add(nsState, bandsKey, 1)
	// Apply syncs the log, which makes every earlier Write durable before the marker.
	return storeErrOrNil(d.st.Apply(&b))
}

// moveRetry is how long after a failed move of the band postings the next may start.
const moveRetry = time.Minute

// startMove starts moving the band postings to the store in the background, once the
// copy has outgrown its budget; d.mu is held.
func (d *Engine) startMove() {
	if d.bandsStored || d.moving || !d.bandIdx.isOver() || time.Since(d.moveFailed) < moveRetry {
		return
	}
	d.moving = true
	d.moves.Add(1)
	go func() {
		defer d.moves.Done()
		err := d.moveBands()
		d.mu.Lock()
		defer d.mu.Unlock()
		d.moving = false
		if err != nil {
			d.moveFailed = time.Now()
			return
		}
		d.bandsMoved()
	}()
}

// postsBands reports whether writes put band postings in the store; d.mu is held.
func (d *Engine) postsBands() bool { return d.bandsStored || d.moving }

// index adds a stored document to the accelerators once its batch is written.
func (d *Engine) index(r *Record, bandKeys []uint64) {
	if d.shared {
		return
	}
	if d.indexed(&r.Entry) && !d.cfg.NoSimHash {
		d.sim.Add(r.seq, r.SimHash)
	}
	d.bandIdx.add(bandKeys, r.seq)
	if d.postsBands() {
		d.bandKeys.add(bandKeys)
	}
	d.startMove()
}

// unindex removes a stored document from the accelerators once the batch removing it is
// written (the band filter cannot forget).
func (d *Engine) unindex(r *Record) {
	d.recs.drop(r.seq)
	if d.shared {
		return
	}
	d.sim.Remove(r.seq)
	d.bandIdx.remove(d.bandKeysOf(&r.Entry), r.seq)
}
