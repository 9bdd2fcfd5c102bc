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
// transaction's intent, the field's next state.
//
// A field's intent comes to the prepare as a (field, condition, value) triple, of one
// of three kinds:
//
//   - condition a committed value (a posting's ids, "" for none): the field must hold
//     it, and value is the whole pending value, which the client made from the
//     condition, so that the script only compares and sets (the detector's postings);
//   - condition markKnown: no condition, value is pendingHead, with the next state
//     (a record put or deleted), and the script appends the committed value;
//   - condition markDelta: no condition, value is the changes to a posting's ids ("+id"
//     and "-id" joined by commas), and the script makes the next state from the
//     committed ids, and answers how many ids the posting gains less how many it loses.

// prepScript places transaction ARGV[1]'s intents on fields of KEYS[1]: ARGV[2:] are
// (field, condition, value) triples. It returns "L" followed by the holder when another
// transaction holds one of the fields, "C" when a condition fails, and "OK" followed
// by "," and the count of each markDelta field once every intent is placed; nothing
// changes unless it returns OK. KEYS[2], when given, is the bucket's sorted set of
// fields (an ordered namespace's), where each field gets its member with its intent,
// so that a reader of the set finds it pending.
var prepScript = newScript(luaField + `
local vs, z, d = {}, KEYS[2] or '', {}
local r = check(ARGV[1], KEYS[1], z, 2, #ARGV, vs)
if r then return r end
place(ARGV[1], KEYS[1], z, 2, #ARGV, vs, d)
if #d == 0 then return 'OK' end
return 'OK,' .. table.concat(d, ',')
`)

// resolveScript ends transaction ARGV[1]'s intents on fields ARGV[3:] of KEYS[1]: it
// applies them when ARGV[2] is "1" (committed) and drops them otherwise (aborted), and
// returns how many fields it was given. A field that holds no intent of that
// transaction (resolved already) is left alone. KEYS[2], when given, is the bucket's
// sorted set of fields: a field left empty leaves it.
var resolveScript = newScript(luaField + `
local vs, pfx = {}, '\255' .. ARGV[1]
for i = 3, #ARGV do vs[i] = redis.call('HGET', KEYS[1], ARGV[i]) end
for i = 3, #ARGV do settle(pfx, ARGV[2] == '1', KEYS[1], KEYS[2] or '', ARGV[i], vs[i]) end
return #ARGV - 2
`)

// luaField is the scripts' library over field values (see field.go).
//
// be32(n) is n in 4 bytes, big-endian; member(f) the member of field f in an ordered
// bucket's sorted set: its length, then the field, so that the set sorts by length
// first. holder(v) is the transaction whose intent field value v holds, nil for none;
// parts(v) the next and the committed state of a pending v (false for none).
//
// apply(c, intent) is committed ids c (false for none) after markDelta's changes,
// sorted as appendIDs sorts them (Lua's < follows the server's locale and its numbers
// are doubles: ids compare as strings, by length first), false for none; nids(s)
// counts the ids of s.
//
// check(txn, k, z, first, last, vs) reads the fields of the triples ARGV[first],
// ARGV[first+3], ..., ARGV[last] of bucket k (and touches its sorted set z, "" for
// none) into vs, by index in ARGV; it returns nil when txn may place its intents
// there, "L" and the transaction that holds one of the fields, or else "C" when a
// condition fails. A field that must be absent gets its value at once (HSETNX, one
// call where reading and setting are two: most of an add's postings are new), and
// loses it again if the bucket does not pass. A field that holds txn's intent already
// (a call run again) passes. place(txn, k, z, first, last, vs, d) then places the
// others, appending each markDelta field's count to d.
//
// settle(pfx, commit, k, z, f, v) ends the intent of the transaction whose pending
// values start with pfx on field f of bucket k, whose value v was read before any
// write: the field takes its next state when commit, and keeps its committed one
// otherwise.
const luaField = `
local function be32(n)
  return string.char(math.floor(n / 16777216) % 256, math.floor(n / 65536) % 256, math.floor(n / 256) % 256, n % 256)
end
local function member(f) return be32(#f) .. f end
local function holder(v)
  if not v then return nil end
  local a, b = string.byte(v, 1, 2)
  if a == 255 and b ~= 255 then return string.sub(v, 2, 17) end
  return nil
end
local function parts(v)
  local n1, n2, n3, n4, a = string.byte(v, 18, 22)
  local e = 23 + ((n1 * 256 + n2) * 256 + n3) * 256 + n4
  local nxt, cur = false, false
  if a == 49 then nxt = string.sub(v, 23, e - 1) end
  if string.byte(v, e) == 49 then cur = string.sub(v, e + 1) end
  return nxt, cur
end
local function less(a, b)
  if #a ~= #b then return #a < #b end
  return a < b
end
local function apply(c, intent)
  local set = {}
  for id in string.gmatch(c or '', '%d+') do set[id] = true end
  for o, id in string.gmatch(intent, '([+-])(%d+)') do
    if o == '+' then set[id] = true else set[id] = nil end
  end
  local ids = {}
  for id in pairs(set) do ids[#ids + 1] = id end
  if #ids == 0 then return false end
  table.sort(ids, less)
  return table.concat(ids, ',')
end
local function nids(s)
  if not s or s == '' then return 0 end
  local _, n = string.gsub(s, ',', ',')
  return n + 1
end
local function check(txn, k, z, first, last, vs)
  if z ~= '' then redis.call('EXISTS', z) end
  local r, set = nil, {}
  for j = first, last, 3 do
    local c, x, v = ARGV[j + 1], ARGV[j + 2], nil
    if c == '' and redis.call('HSETNX', k, ARGV[j], x) == 1 then
      v, set[#set + 1] = x, ARGV[j]
    else
      v = redis.call('HGET', k, ARGV[j])
    end
    vs[j] = v
    if not (v == c or (not v and c == '') or v == x) then
      local h = holder(v)
      if h and h ~= txn then r = 'L' .. h; break end
      if not h and c ~= '*' and c ~= '+' then r = 'C' end
    end
  end
  if r and #set > 0 then redis.call('HDEL', k, unpack(set)) end
  return r
end
local function place(txn, k, z, first, last, vs, d)
  for j = first, last, 3 do
    local f, c, x, v = ARGV[j], ARGV[j + 1], ARGV[j + 2], vs[j]
    if c == '+' then
      local nxt, cur = false, v
      if holder(v) == txn then nxt, cur = parts(v) else nxt = apply(v, x) end
      d[#d + 1] = nids(nxt) - nids(cur)
      if nxt then x = '\255' .. txn .. be32(#nxt) .. '1' .. nxt else x = '\255' .. txn .. be32(0) .. '0' end
      if cur then x = x .. '1' .. cur else x = x .. '0' end
      redis.call('HSET', k, f, x)
    elseif c == '*' then
      if holder(v) ~= txn then
        if v then x = x .. '1' .. v else x = x .. '0' end
        redis.call('HSET', k, f, x)
      end
    elseif v ~= x then
      redis.call('HSET', k, f, x)
    end
    if z ~= '' then redis.call('ZADD', z, 0, member(f)) end
  end
end
local function settle(pfx, commit, k, z, f, v)
  if not v or string.sub(v, 1, 17) ~= pfx then return end
  local n1, n2, n3, n4, a = string.byte(v, 18, 22)
  local e = 23 + ((n1 * 256 + n2) * 256 + n3) * 256 + n4
  local s = false
  if commit then
    if a == 49 then s = string.sub(v, 23, e - 1) end
  elseif string.byte(v, e) == 49 then
    s = string.sub(v, e + 1)
  end
  if s then
    redis.call('HSET', k, f, s)
  else
    redis.call('HDEL', k, f)
    if z ~= '' then redis.call('ZREM', z, member(f)) end
  end
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
