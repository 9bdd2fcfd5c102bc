package redisstore

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Scripts over every bucket of one master. A script call a bucket costs the masters a
// call for nearly every posting of an add (some 50 buckets, each in a slot of its own),
// and the call, not the work in it, is most of their CPU. These scripts carry every
// bucket that one master serves in one call: they run on many slots of their node
// (allow-cross-slot-keys) and are routed by their one declared key, the first bucket.
// A key its node does not serve (its slot moved, or is moving, since the client last
// read the slot map) fails the call there; the caller then runs that call's buckets
// one command or script each (HGET, prepScript, resolveScript), which follow MOVED,
// ASK and TRYAGAIN. The read and the resolve read every key before they write any, so
// they fail before any change. The prepare may have placed some of its intents (a new
// field's, which it sets as it checks it): run again, a prepare finds its own intents
// and passes, and an attempt that aborts drops every intent of a call that failed.
// Both kinds are idempotent for a given transaction, so a call that failed after it
// ran (a lost connection) may be run again by bucket.

// groupByMaster returns the indexes 0..n-1, grouped by the master the client maps
// key(i) to, in order of first appearance; an index whose master the client cannot
// tell gets a group of its own.
func (db *DB) groupByMaster(ctx context.Context, n int, key func(int) string) [][]int {
	at := map[*redis.Client]int{}
	var groups [][]int
	for i := range n {
		node, err := db.c.MasterForKey(ctx, key(i))
		if err != nil {
			groups = append(groups, []int{i})
			continue
		}
		j, ok := at[node]
		if !ok {
			j = len(groups)
			at[node] = j
			groups = append(groups, nil)
		}
		groups[j] = append(groups[j], i)
	}
	return groups
}

// readManyScript reads many fields: ARGV are (bucket, field) pairs, and the answer
// each field's value (nil for none), in order, all read at one moment. A field's value
// carries the intent on it (field.go), so one HGET reads both.
var readManyScript = newScript(`#!lua flags=no-writes,allow-cross-slot-keys
local out = {}
for i = 1, #ARGV, 2 do out[#out + 1] = redis.call('HGET', ARGV[i], ARGV[i + 1]) end
return out
`)

// prepManyScript is prepScript over many buckets of many transactions: ARGV are, for
// each transaction, its id, its number of buckets, then for each bucket its key, its
// number of fields n (write.size: negative for an ordered namespace's), then n (field,
// condition, value) triples. It answers, for each bucket in order, prepScript's
// answer: "OK" (its intents placed, and the counts of its markDelta fields), "C" (a
// condition failed there) or "L" followed by the transaction that holds one of its
// fields; a bucket's intents are placed only if it answers OK, whatever the others
// answer. The transactions go one after the other, each checking all its buckets
// before placing its intents: a later one meets an earlier one's intents as it would
// in a call of its own after it.
var prepManyScript = newScript("#!lua flags=allow-cross-slot-keys\n" + luaField + luaBucket + `
local out, vs, i = {}, {}, 1
while i <= #ARGV do
  local txn, nb, first, starts, ns, zs = ARGV[i], tonumber(ARGV[i + 1]), #out, {}, {}, {}
  i = i + 2
  for g = 1, nb do
    local n, z = bucket(i)
    out[first + g] = check(txn, ARGV[i], z, i + 2, i - 1 + 3 * n, vs) or 'OK'
    starts[g], ns[g], zs[g] = i, n, z
    i = i + 2 + 3 * n
  end
  for g, s in ipairs(starts) do
    if out[first + g] == 'OK' then
      local d = {}
      place(txn, ARGV[s], zs[g], s + 2, s - 1 + 3 * ns[g], vs, d)
      if #d > 0 then out[first + g] = 'OK,' .. table.concat(d, ',') end
    end
  end
end
return out
`)

// resolveManyScript is resolveScript over many buckets: ARGV are, for each
// transaction, its id, "1" if it committed, its number of buckets, then for each
// bucket its key, its number of fields n (as prepManyScript has it) and the n fields.
// It answers how many fields it was given.
var resolveManyScript = newScript("#!lua flags=allow-cross-slot-keys\n" + luaField + luaBucket + `
local vs, i, nf = {}, 1, 0
while i <= #ARGV do
  i = i + 3
  for _ = 1, tonumber(ARGV[i - 1]) do
    local n, z = bucket(i)
    if z ~= '' then redis.call('EXISTS', z) end
    for j = i + 2, i + 1 + n do vs[j] = redis.call('HGET', ARGV[i], ARGV[j]) end
    i = i + 2 + n
    nf = nf + n
  end
end
i = 1
while i <= #ARGV do
  local pfx, commit = '\255' .. ARGV[i], ARGV[i + 1] == '1'
  i = i + 3
  for _ = 1, tonumber(ARGV[i - 1]) do
    local n, z = bucket(i)
    for j = i + 2, i + 1 + n do settle(pfx, commit, ARGV[i], z, ARGV[j], vs[j]) end
    i = i + 2 + n
  end
end
return nf
`)

// luaBucket is the many-bucket scripts' bucket(i): the number of fields of the bucket
// whose key is ARGV[i], from ARGV[i + 1], and its sorted set of fields (indexKey), ""
// for none.
const luaBucket = `
local function bucket(i)
  local n = tonumber(ARGV[i + 1])
  if n < 0 then return -n, ARGV[i] .. 'Z' end
  return n, ''
end
`
