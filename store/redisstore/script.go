package redisstore

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// script is a Lua script sent by SHA: nodes learn it from the first EVAL that fails
// over to its text.
type script struct{ src, sha string }

func newScript(src string) *script {
	s := &script{src: src, sha: redis.NewScript(src).Hash()}
	scripts[s.sha] = s
	return s
}

// scripts are every script by SHA, for pipelined returns NOSCRIPT errors.
var scripts = map[string]*script{}

// run queues s on p.
func (s *script) run(ctx context.Context, p redis.Pipeliner, keys []string, args ...any) *redis.Cmd {
	return p.EvalSha(ctx, s.sha, keys, args...)
}

// pipelined runs fn's commands in one pipeline (one round trip to each master, in
// parallel), then runs again the commands a node did not run: the scripts it did not
// know, by their text (a node new to the cluster, or a replica promoted since it last
// ran them: one more round trip, once per script and node), and those it answered
// TRYAGAIN (a multi-key script on a slot half migrated: the reshard moves the rest
// within milliseconds).
func (db *DB) pipelined(ctx context.Context, fn func(p redis.Pipeliner)) ([]redis.Cmder, error) {
	cmds, _ := db.c.Pipelined(ctx, func(p redis.Pipeliner) error { fn(p); return nil })
	for try := 0; try < maxAgain; try++ {
		var again []*redis.Cmd
		var args [][]any
		for _, c := range cmds {
			rc, ok := c.(*redis.Cmd)
			if !ok || rc.Err() == nil {
				continue
			}
			a := slices.Clone(rc.Args())
			switch msg := rc.Err().Error(); {
			case strings.HasPrefix(msg, "NOSCRIPT"):
				a[0], a[1] = "eval", scripts[a[1].(string)].src
			case strings.HasPrefix(msg, "TRYAGAIN"):
			default:
				continue
			}
			again, args = append(again, rc), append(args, a)
		}
		if len(again) == 0 {
			break
		}
		if try > 0 {
			time.Sleep(time.Duration(try) * time.Millisecond)
		}
		res := make([]*redis.Cmd, len(again))
		_, _ = db.c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, a := range args {
				res[i] = p.Do(ctx, a...)
			}
			return nil
		})
		for i, c := range again {
			c.SetVal(res[i].Val())
			c.SetErr(res[i].Err())
		}
	}
	return cmds, firstErr(cmds)
}

// maxAgain bounds how often pipelined runs again the commands a node did not run.
const maxAgain = 50

// firstErr returns the first error of cmds but redis.Nil, which is an answer (no such
// key or field), or nil.
func firstErr(cmds []redis.Cmder) error {
	for _, c := range cmds {
		if err := c.Err(); err != nil && !errors.Is(err, redis.Nil) {
			return err
		}
	}
	return nil
}

// The Lua scripts' fallbacks run on one bucket each, KEYS[1], and when it is an
// ordered namespace's, its sorted set of fields, KEYS[2] (the same slot), so each runs
// on the node that owns the slot, atomically there. They are sent by SHA (EVALSHA),
// the script's text only when a node does not know it yet. See field.go for what a
// field holds: its committed value and, while a transaction writes it, that
// transaction's intent: "+id" and "-id" joined by commas for a posting, "n" and the
// record (escaped) for a put, "d" for a delete.

// prepScript places transaction ARGV[1]'s intents on fields of KEYS[1]: ARGV[2:] are
// (field, condition, head) triples, the condition the committed value the field must
// hold (empty: no ids) or noCond, the head pendingHead's. It
// returns "L" followed by the holder when another transaction holds one of the fields,
// "C" when a condition fails, and "OK" once every intent is placed; nothing changes
// unless it returns OK. KEYS[2], when given, is the bucket's sorted set of fields (an
// ordered namespace's), where each field gets its member with its intent, so that a
// reader of the set finds it pending.
var prepScript = newScript(luaField + `
local vs, z = {}, KEYS[2] or ''
local r = check(ARGV[1], KEYS[1], z, 2, #ARGV, vs)
if r then return r end
place(KEYS[1], z, 2, #ARGV, vs)
return 'OK'
`)

// resolveScript ends transaction ARGV[1]'s intents on fields ARGV[3:] of KEYS[1]: it
// applies them when ARGV[2] is "1" (committed) and drops them otherwise (aborted). It
// returns, for each field, how many ids its posting gained less how many it lost: 0 for
// a record, or when the field holds no intent of that transaction (resolved already).
// KEYS[2], when given, is the bucket's sorted set of fields: a field left empty leaves it.
var resolveScript = newScript(luaField + `
local vs, out = {}, {}
for i = 3, #ARGV do vs[i] = redis.call('HGET', KEYS[1], ARGV[i]) end
for i = 3, #ARGV do out[#out + 1] = settle(ARGV[1], ARGV[2] == '1', KEYS[1], KEYS[2] or '', ARGV[i], vs[i]) end
return out
`)

// luaField is the scripts' library over field values (see field.go).
//
// member(f) is the member of field f in an ordered bucket's sorted set: its length (4
// bytes, big-endian), then the field, so that the set sorts by length first.
//
// at(v) is where, in field value v, the byte that says whether a committed value
// follows the intent is, or nil when v holds no intent; base(v, e) is v's committed
// value (e = at(v)), false for none.
//
// apply(c, intent) is committed value c (false for none) after a committed intent (a
// record's "n" and value, or "d"; a posting's "+id" and "-id" joined by commas, keeping
// the ids sorted as appendIDs does) and how many ids the posting gained less how many
// it lost. Lua's < follows the server's locale and its numbers are doubles, so ids are
// compared as strings by length first.
//
// check(txn, k, z, first, last, vs) reads the fields of the (field, condition, head)
// triples ARGV[first], ARGV[first+3], ..., ARGV[last] of bucket k (and touches its
// sorted set z, "" for none, so that every key is read before any is written) into vs
// (their committed values, by index in ARGV); it returns nil when txn may place its
// intents there, "C" when a condition fails, or "L" and the transaction that holds one
// of the fields. place(k, z, first, last, vs) then places them.
//
// settle(txn, commit, k, z, f, v) ends transaction txn's intent on field f of bucket
// k, whose value v was read before any write: it applies it when commit, drops it
// otherwise, and returns apply's count (0 when v holds no intent of txn).
const luaField = `
local function member(f)
  local n = #f
  return string.char(math.floor(n / 16777216) % 256, math.floor(n / 65536) % 256, math.floor(n / 256) % 256, n % 256) .. f
end
local function at(v)
  if not v or string.byte(v, 1) ~= 255 or string.byte(v, 2) == 255 then return nil end
  local a, b, c, d = string.byte(v, 18, 21)
  return 22 + ((a * 256 + b) * 256 + c) * 256 + d
end
local function base(v, e)
  if not e then return v end
  if string.byte(v, e) == 48 then return false end
  return string.sub(v, e + 1)
end
local function less(a, b)
  if #a ~= #b then return #a < #b end
  return a < b
end
local function apply(c, intent)
  local op = string.sub(intent, 1, 1)
  if op == 'n' then return string.sub(intent, 2), 0 end
  if op == 'd' then return false, 0 end
  if not c and not string.find(intent, ',', 1, true) then
    if op == '+' then return string.sub(intent, 2), 1 end
    return false, 0
  end
  local set = {}
  for id in string.gmatch(c or '', '%d+') do set[id] = true end
  local delta = 0
  for o, id in string.gmatch(intent, '([+-])(%d+)') do
    if o == '+' and not set[id] then set[id] = true; delta = delta + 1 end
    if o == '-' and set[id] then set[id] = nil; delta = delta - 1 end
  end
  local ids = {}
  for id in pairs(set) do ids[#ids + 1] = id end
  if #ids == 0 then return false, delta end
  table.sort(ids, less)
  return table.concat(ids, ','), delta
end
local function check(txn, k, z, first, last, vs)
  if z ~= '' then redis.call('EXISTS', z) end
  for j = first, last, 3 do
    local v = redis.call('HGET', k, ARGV[j])
    local e = at(v)
    if e and string.sub(v, 2, 17) ~= txn then return 'L' .. string.sub(v, 2, 17) end
    vs[j] = base(v, e)
  end
  for j = first, last, 3 do
    local c = ARGV[j + 1]
    if c ~= '*' and (vs[j] or '') ~= c then return 'C' end
  end
  return nil
end
local function place(k, z, first, last, vs)
  for j = first, last, 3 do
    local c = vs[j]
    if c then c = '1' .. c else c = '0' end
    redis.call('HSET', k, ARGV[j], ARGV[j + 2] .. c)
    if z ~= '' then redis.call('ZADD', z, 0, member(ARGV[j])) end
  end
end
local function settle(txn, commit, k, z, f, v)
  local e = at(v)
  if not e or string.sub(v, 2, 17) ~= txn then return 0 end
  local c, delta = base(v, e), 0
  if commit then c, delta = apply(c, string.sub(v, 22, e - 1)) end
  if c then
    redis.call('HSET', k, f, c)
  else
    redis.call('HDEL', k, f)
    if z ~= '' then redis.call('ZREM', z, member(f)) end
  end
  return delta
end
`

// less8 compares two 8-byte strings bytewise: Lua's < follows the server's locale.
const less8 = `
local function less8(a, b)
  for i = 1, 8 do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return false
end
`

// bumpScript raises the id counter KEYS[1] (8 bytes, big-endian) to ARGV[1] if it is
// below it.
var bumpScript = newScript(less8 + `
local c = redis.call('GET', KEYS[1])
if not c or less8(c, ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end
return 1
`)

// reserveScript adds ARGV[1] (below 2^31) to the id counter KEYS[1], stopping at the
// largest uint64, and returns the counter before and after: the ids above the one up
// to the other are the caller's. It returns the error NOID when the counter is at the
// largest uint64 already.
var reserveScript = newScript(`
local max = string.rep('\255', 8)
local c = redis.call('GET', KEYS[1]) or string.rep('\0', 8)
if c == max then return redis.error_reply('NOID') end
local b = {string.byte(c, 1, 8)}
local carry = tonumber(ARGV[1])
for i = 8, 1, -1 do
  local v = b[i] + carry
  b[i] = v % 256
  carry = math.floor(v / 256)
end
local n = max
if carry == 0 then n = string.char(unpack(b)) end
redis.call('SET', KEYS[1], n)
return {c, n}
`)
