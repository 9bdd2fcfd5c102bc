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

// write is what a batch does to one bucket: an intent on each of its fields.
type write struct {
	key    string
	index  string // the sorted set of the bucket's fields, "" but for an ordered namespace
	fields []wfield
}

// wfield is the intent of a write on one field: the committed value the field must
// hold (or markKnown, markDelta), and its next state.
type wfield struct {
	name, cond string
	// next is the field's next state (markDelta's: the changes), nextHas whether there
	// is one (false: the field goes).
	next    string
	nextHas bool
	delta   int64 // how many ids a conditioned posting gains less how many it loses
	ns      int   // the namespace of a posting field, -1 for a record's
}

// keys returns the keys of w's scripts.
func (w *write) keys() []string {
	if w.index != "" {
		return []string{w.key, w.index}
	}
	return []string{w.key}
}

// value returns the value of field f's triple in the prepare of transaction txn.
func (f *wfield) value(txn string) string {
	switch f.cond {
	case markDelta:
		return f.next
	case markKnown:
		return string(appendPending(nil, txn, f.next, f.nextHas))
	}
	b := appendPending(make([]byte, 0, 24+len(f.next)+len(f.cond)), txn, f.next, f.nextHas)
	if f.cond == "" {
		return string(append(b, '0'))
	}
	return string(append(append(b, '1'), f.cond...))
}

// appendPrep appends the (field, condition, value) triples of w's fields to args, for
// the prepare of transaction txn.
func (w *write) appendPrep(args []any, txn string) []any {
	for i := range w.fields {
		f := &w.fields[i]
		args = append(args, f.name, f.cond, f.value(txn))
	}
	return args
}

// prepArgs returns the arguments of prepScript for w.
func (w *write) prepArgs(txn string) []any {
	return w.appendPrep(append(make([]any, 0, 1+3*len(w.fields)), txn), txn)
}

// size is the scripts over many buckets' count of w's fields: negative for the bucket
// of an ordered namespace, whose sorted set of fields (indexKey) the scripts keep too.
func (w *write) size() int {
	if w.index != "" {
		return -len(w.fields)
	}
	return len(w.fields)
}

// appendNames appends the names of w's fields to args.
func (w *write) appendNames(args []any) []any {
	for i := range w.fields {
		args = append(args, w.fields[i].name)
	}
	return args
}

// resolveArgs returns the arguments of resolveScript for w.
func (w *write) resolveArgs(txn string, commit bool) []any {
	return w.appendNames(append(make([]any, 0, 2+len(w.fields)), txn, boolArg(commit)))
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
	n := b.Len()
	order := make([]field, 0, n)
	posts := make(map[field]*posting, n)
	pool := make([]posting, 0, n) // every posting, in one allocation: at most one an op
	recs := map[field]*[]byte{}   // nil pointer target: deleted
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
				pool = append(pool, posting{ns: o.Namespace})
				p = &pool[len(pool)-1]
				p.ops = p.one[:0]
				posts[field{k, f}] = p
				order = append(order, field{k, f})
			}
			p.set(o.ID, o.Kind == store.OpAdd)
		}
	}
	for _, c := range conds {
		k, f := db.postingBucket(c.Namespace, c.Key)
		p, ok := posts[field{k, f}]
		if !ok {
			return nil, 0, false, fmt.Errorf("%w: a condition on namespace %d key %q, which the batch does not write: condition only keys the batch adds to or removes from", ErrOptions, c.Namespace, c.Key)
		}
		ids := slices.Clone(c.IDs)
		slices.SortFunc(ids, cmp.Compare)
		p.cond, p.conditioned = slices.Compact(ids), true
	}
	byKey := make(map[string]int, len(order))
	ws = make([]write, 0, len(order))
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
		ws[i].add(f.name, posts[f], recs[f])
	}
	return ws, maxID, puts, nil
}

// posting is what a batch does to one posting: its changes, in the order made, one an
// id, and the ids the batch's condition says it holds.
type posting struct {
	ns          store.Namespace
	ops         []idOp
	one         [1]idOp  // ops's array while it holds one change, as nearly all do
	cond        []uint64 // ascending
	conditioned bool
}

// idOp is an id added to a posting or removed from it.
type idOp struct {
	id  uint64
	add bool
}

// set records that the batch adds id to p or removes it, the later change winning.
func (p *posting) set(id uint64, add bool) {
	for i := range p.ops {
		if p.ops[i].id == id {
			p.ops[i].add = add
			return
		}
	}
	p.ops = append(p.ops, idOp{id, add})
}

// add adds to w the field name of a posting p (nil for a record's field), or of a
// record rec (nil: deleted).
func (w *write) add(name string, p *posting, rec *[]byte) {
	f := wfield{name: name, ns: -1}
	switch {
	case p == nil:
		f.cond = markKnown
		if rec != nil {
			f.next, f.nextHas = string(*rec), true
		}
	case p.conditioned:
		// The field must hold cond: its next state is known now, and the script only
		// compares and sets.
		next := p.apply()
		f.cond = string(appendIDs(nil, p.cond))
		f.next, f.nextHas, f.delta = string(appendIDs(nil, next)), len(next) > 0, int64(len(next)-len(p.cond))
	default:
		f.cond, f.next, f.nextHas = markDelta, string(p.intent()), true
	}
	if p != nil {
		f.ns = int(p.ns)
	}
	w.fields = append(w.fields, f)
}

// apply returns p's condition, the ids it holds, after p's changes, ascending.
func (p *posting) apply() []uint64 {
	out := append(make([]uint64, 0, len(p.cond)+len(p.ops)), p.cond...)
	for _, o := range p.ops {
		i, found := slices.BinarySearch(out, o.id)
		switch {
		case o.add && !found:
			out = slices.Insert(out, i, o.id)
		case !o.add && found:
			out = slices.Delete(out, i, i+1)
		}
	}
	return out
}

// intent encodes p's changes ("+id" and "-id" joined by commas, as the scripts read
// them), in ascending id order.
func (p *posting) intent() []byte {
	ops := slices.Clone(p.ops)
	slices.SortFunc(ops, func(a, b idOp) int { return cmp.Compare(a.id, b.id) })
	var b []byte
	for i, o := range ops {
		if i > 0 {
			b = append(b, ',')
		}
		if o.add {
			b = append(b, '+')
		} else {
			b = append(b, '-')
		}
		b = strconv.AppendUint(b, o.id, 10)
	}
	return b
}
