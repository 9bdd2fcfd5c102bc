package redisstore

import "encoding/binary"

// A field of a bucket holds its committed value and, while a transaction is writing
// it, that transaction's intent, in one value, so that a script reads a field and its
// intent with one HGET and places or resolves an intent with one HSET (or HDEL): the
// masters' CPU goes to the calls a script makes, and an intent in a hash of its own
// took twice as many. The intent is the field's next state, what it holds once the
// transaction commits, so that resolving it is cutting it out, not computing it. The
// forms:
//
//	committed   the value as it is: a posting's ids (digits and commas), or a record,
//	            escaped (escRecord) so that it never starts with pendingMark alone
//	pending     pendingMark, the transaction (16 bytes), the next state's length n (4
//	            bytes, big-endian), '1' and the next state (n bytes) or '0' (the field
//	            goes), then '1' and the committed value, or '0' when there is none
//
// A transaction id starts with its start time's high byte, never 0xff (that is some
// thousand years off), so a value that starts with pendingMark followed by anything
// but pendingMark is pending. Once resolved, a field holds its committed value alone:
// a posting of one id is an integer to Redis again, 2 to 9 bytes in a listpack.
const pendingMark = 0xff

// pendingHead is the start of a field's value while transaction txn's intent is on it,
// up to the committed value: the next state next, or none when !has. For a field the
// batch conditions, the client knows the committed value and appends it; otherwise the
// script does.
func pendingHead(txn, next string, has bool) string {
	return string(appendPending(nil, txn, next, has))
}

// appendPending appends pendingHead(txn, next, has) to b.
func appendPending(b []byte, txn, next string, has bool) []byte {
	b = append(b, pendingMark)
	b = append(b, txn...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(next)))
	if !has {
		return append(b, '0')
	}
	b = append(b, '1')
	return append(b, next...)
}

// fieldValue is one field of a bucket, as splitField reads it: its committed value v
// (has: there is one) and, when txn is not "", the next state a pending transaction
// leaves it in once committed (next, nextHas).
type fieldValue struct {
	v, txn, next string
	has, nextHas bool
}

// state returns the field as it is once its transaction, if any, ended as committed
// says.
func (fv *fieldValue) state(committed bool) (string, bool) {
	if fv.txn != "" && committed {
		return fv.next, fv.nextHas
	}
	return fv.v, fv.has
}

// splitField reads a field's stored value raw (present: the field exists); false when
// raw is in neither form.
func splitField(raw string, present bool) (fieldValue, bool) {
	if !present || len(raw) == 0 || raw[0] != pendingMark || len(raw) > 1 && raw[1] == pendingMark {
		return fieldValue{v: raw, has: present}, true
	}
	const head = 1 + 16 + 4 + 1
	if len(raw) < head+1 {
		return fieldValue{}, false
	}
	n := binary.BigEndian.Uint32([]byte(raw[17:21]))
	if uint64(n) >= uint64(len(raw)-head) || raw[21] != '1' && (raw[21] != '0' || n != 0) {
		return fieldValue{}, false
	}
	e := head + int(n) // the byte that says whether a committed value follows
	fv := fieldValue{txn: raw[1:17], next: raw[head:e], nextHas: raw[21] == '1'}
	switch raw[e] {
	case '1':
		fv.v, fv.has = raw[e+1:], true
		return fv, true
	case '0':
		return fv, e+1 == len(raw)
	}
	return fieldValue{}, false
}

// escRecord returns the committed form of a record: rec itself, unless it starts with
// pendingMark, which it then doubles. Records of neardup start with a version byte,
// so the escape costs nothing in practice.
func escRecord(rec []byte) []byte {
	if len(rec) > 0 && rec[0] == pendingMark {
		return append([]byte{pendingMark}, rec...)
	}
	return rec
}

// unescRecord undoes escRecord; false for a value escRecord does not make.
func unescRecord(v string) (string, bool) {
	if len(v) == 0 || v[0] != pendingMark {
		return v, true
	}
	return v[1:], len(v) > 1 && v[1] == pendingMark
}
