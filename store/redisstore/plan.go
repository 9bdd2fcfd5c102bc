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

// noCond is the condition of a field that has none: a posting's committed value (ids
// and commas) never is "*", so the scripts compare a condition with the value as it is.
const noCond = "*"

// write is what a batch does to one bucket: an intent on each of its fields, with the
// committed value the field must hold (noCond for any).
type write struct {
	key     string
	index   string // the sorted set of the bucket's fields, "" but for an ordered namespace
	fields  []string
	conds   []string
	intents []string
	ns      []int // the namespace of each posting field, -1 for a record's
}

// keys returns the keys of w's scripts.
func (w *write) keys() []string {
	if w.index != "" {
		return []string{w.key, w.index}
	}
	return []string{w.key}
}

// prepArgs returns the arguments of prepScript for w.
func (w *write) prepArgs(txn string) []any {
	args := make([]any, 0, 1+3*len(w.fields))
	args = append(args, txn)
	for i, f := range w.fields {
		args = append(args, f, w.conds[i], pendingHead(txn, w.intents[i]))
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
	type posting struct {
		ns  store.Namespace
		ids map[uint64]bool // id -> added
	}
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
				v := append([]byte{'n'}, escRecord(o.Data)...)
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
		w := &ws[i]
		w.fields = append(w.fields, f.name)
		cond, ok := condOf[f]
		if !ok {
			cond = noCond
		}
		w.conds = append(w.conds, cond)
		if p := posts[f]; p != nil {
			w.ns = append(w.ns, int(p.ns))
			w.intents = append(w.intents, string(postingIntent(p.ids)))
		} else {
			w.ns = append(w.ns, -1)
			v := []byte("d")
			if r := recs[f]; r != nil {
				v = *r
			}
			w.intents = append(w.intents, string(v))
		}
	}
	return ws, maxID, puts, nil
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
