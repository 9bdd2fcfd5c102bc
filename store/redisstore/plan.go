package redisstore

import (
	"cmp"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/neardup/neardup/store"
)

// A transaction id: 8 bytes of start time (Unix ns, big-endian, so that older sorts
// first: the older of two transactions wins a conflict) and 8 random bytes.
func newTxn(start time.Time) string {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 16), uint64(start.UnixNano()))
	b = append(b, make([]byte, 8)...)
	_, _ = rand.Read(b[8:]) // never fails
	return string(b)
}

func txnStart(txn string) time.Time {
	if len(txn) != 16 {
		return time.Time{}
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64([]byte(txn))))
}

// The conditions of the fields with none (see script.go): a posting's committed value
// (ids and commas) is never either.
const (
	markKnown = "*" // the next state is known whatever the field holds (a record's)
	markDelta = "+" // the next state is the field's ids after changes (a posting's)
)

// write is what a batch does to one bucket: an intent on each of its fields, with the
// committed value the field must hold (or markKnown, markDelta).
type write struct {
	key    string
	index  string // the sorted set of the bucket's fields, "" but for an ordered namespace
	fields []string
	conds  []string
	// nexts are the fields' next states (markDelta's: the changes), nextHas whether
	// there is one (false: the field goes).
	nexts   []string
	nextHas []bool
	deltas  []int64 // how many ids a conditioned posting gains less how many it loses
	ns      []int   // the namespace of each posting field, -1 for a record's
}

// keys returns the keys of w's scripts.
func (w *write) keys() []string {
	if w.index != "" {
		return []string{w.key, w.index}
	}
	return []string{w.key}
}

// value returns the value of field i's triple in the prepare of transaction txn.
func (w *write) value(txn string, i int) string {
	switch c := w.conds[i]; c {
	case markDelta:
		return w.nexts[i]
	case markKnown:
		return pendingHead(txn, w.nexts[i], w.nextHas[i])
	case "":
		return pendingHead(txn, w.nexts[i], w.nextHas[i]) + "0"
	default:
		return pendingHead(txn, w.nexts[i], w.nextHas[i]) + "1" + c
	}
}

// prepArgs returns the arguments of prepScript for w.
func (w *write) prepArgs(txn string) []any {
	args := make([]any, 0, 1+3*len(w.fields))
	args = append(args, txn)
	for i, f := range w.fields {
		args = append(args, f, w.conds[i], w.value(txn, i))
	}
	return args
}

// size is the scripts over many buckets' count of w's fields: negative for the bucket
// of an ordered namespace, whose sorted set of fields (indexKey) the scripts keep too.
func (w *write) size() int {
	if w.index != "" {
		return -len(w.fields)
	}
	return len(w.fields)
}

// resolveArgs returns the arguments of resolveScript for w.
func (w *write) resolveArgs(txn string, commit bool) []any {
	args := make([]any, 0, 2+len(w.fields))
	args = append(args, txn, boolArg(commit))
	for _, f := range w.fields {
		args = append(args, f)
	}
	return args
}

func boolArg(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// field names one field of one bucket.
type field struct{ key, name string }

// plan turns a batch into one write per bucket, the later of two operations on the
// same record or posting winning, and returns the largest record id it puts.
func (db *DB) plan(b *store.Batch, conds []store.Cond) (ws []write, maxID uint64, puts bool, err error) {
	var order []field
	posts := map[field]*posting{}
	recs := map[field]*[]byte{} // nil pointer target: deleted
	for o := range b.All() {
		switch o.Kind {
		case store.OpPutRecord, store.OpDeleteRecord:
			k, f := db.recordBucket(o.ID)
			if _, ok := recs[field{k, f}]; !ok {
				order = append(order, field{k, f})
			}
			recs[field{k, f}] = nil
			if o.Kind == store.OpPutRecord {
				v := escRecord(o.Data)
				recs[field{k, f}] = &v
				maxID, puts = max(maxID, o.ID), true
			}
		default:
			k, f := db.postingBucket(o.Namespace, o.Data)
			p, ok := posts[field{k, f}]
			if !ok {
				p = &posting{ns: o.Namespace, ids: map[uint64]bool{}}
				posts[field{k, f}] = p
				order = append(order, field{k, f})
			}
			p.ids[o.ID] = o.Kind == store.OpAdd
		}
	}
	condOf := map[field]string{}
	for _, c := range conds {
		k, f := db.postingBucket(c.Namespace, c.Key)
		if _, ok := posts[field{k, f}]; !ok {
			return nil, 0, false, fmt.Errorf("%w: a condition on namespace %d key %q, which the batch does not write: condition only keys the batch adds to or removes from", ErrOptions, c.Namespace, c.Key)
		}
		ids := slices.Clone(c.IDs)
		slices.SortFunc(ids, cmp.Compare)
		condOf[field{k, f}] = string(appendIDs(nil, slices.Compact(ids)))
	}
	byKey := map[string]int{}
	for _, f := range order {
		i, ok := byKey[f.key]
		if !ok {
			i = len(ws)
			byKey[f.key] = i
			ws = append(ws, write{key: f.key})
			if strings.HasPrefix(f.key, db.prefix+":{o") {
				ws[i].index = indexKey(f.key)
			}
		}
		cond, ok := condOf[f]
		ws[i].add(f.name, posts[f], recs[f], cond, ok)
	}
	return ws, maxID, puts, nil
}

// posting is what a batch does to one posting.
type posting struct {
	ns  store.Namespace
	ids map[uint64]bool // id -> added
}

// add adds to w the field name of a posting p (nil for a record's field), with its
// condition cond, if it has one (in condOf), or of a record rec (nil: deleted).
func (w *write) add(name string, p *posting, rec *[]byte, cond string, conditioned bool) {
	w.fields = append(w.fields, name)
	switch {
	case p == nil:
		w.ns = append(w.ns, -1)
		w.conds, w.deltas = append(w.conds, markKnown), append(w.deltas, 0)
		if rec == nil {
			w.nexts, w.nextHas = append(w.nexts, ""), append(w.nextHas, false)
		} else {
			w.nexts, w.nextHas = append(w.nexts, string(*rec)), append(w.nextHas, true)
		}
		return
	case conditioned:
		// The field must hold cond: its next state is known now, and the script only
		// compares and sets.
		old, _ := parseIDs(cond)
		next, _ := applyIntent(old, string(postingIntent(p.ids)))
		w.conds, w.deltas = append(w.conds, cond), append(w.deltas, int64(len(next)-len(old)))
		w.nexts, w.nextHas = append(w.nexts, string(appendIDs(nil, next))), append(w.nextHas, len(next) > 0)
	default:
		w.conds, w.deltas = append(w.conds, markDelta), append(w.deltas, 0)
		w.nexts, w.nextHas = append(w.nexts, string(postingIntent(p.ids))), append(w.nextHas, true)
	}
	w.ns = append(w.ns, int(p.ns))
}

// postingIntent encodes the changes to one posting, id -> added, in ascending id order.
func postingIntent(ids map[uint64]bool) []byte {
	sorted := make([]uint64, 0, len(ids))
	for id := range ids {
		sorted = append(sorted, id)
	}
	slices.SortFunc(sorted, cmp.Compare)
	var b []byte
	for i, id := range sorted {
		if i > 0 {
			b = append(b, ',')
		}
		if ids[id] {
			b = append(b, '+')
		} else {
			b = append(b, '-')
		}
		b = strconv.AppendUint(b, id, 10)
	}
	return b
}
