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

// The Lua scripts run on one bucket each, KEYS[1], and its intents, KEYS[2] (the same
// slot), so each runs on the node that owns the slot, atomically there. They are sent
// by SHA (EVALSHA), the script's text only when a node does not know it yet. See
// keys.go for the layout: a field of a posting bucket holds the committed ids of one
// posting, a field of a record bucket one committed record, and the same field of the
// intents hash the pending transaction's id (16 bytes) followed by its intent: "+id" and
// "-id" joined by commas for a posting, "n" and the record for a put, "d" for a delete.

// prepScript places transaction ARGV[1]'s intents on fields of KEYS[1]: ARGV[2:] are
// (field, condition, intent) triples, the condition "" for none, else "=" followed by
// the committed value the field must hold (empty: no ids). It returns {"L", holder}
// when another transaction holds one of the fields, {"C"} when a condition fails, and
// {"OK"} once every intent is placed; nothing changes unless it returns OK. KEYS[3],
// when given, is the bucket's sorted set of fields (an ordered namespace's), where each
// field gets its member with its intent, so that a reader of the set finds it pending.
var prepScript = newScript(luaMember + `
local txn = ARGV[1]
for i = 2, #ARGV, 3 do
  local l = redis.call('HGET', KEYS[2], ARGV[i])
  if l and string.sub(l, 1, 16) ~= txn then return {'L', string.sub(l, 1, 16)} end
end
for i = 2, #ARGV, 3 do
  local c = ARGV[i + 1]
  if c ~= '' and (redis.call('HGET', KEYS[1], ARGV[i]) or '') ~= string.sub(c, 2) then
    return {'C'}
  end
end
for i = 2, #ARGV, 3 do
  redis.call('HSET', KEYS[2], ARGV[i], txn .. ARGV[i + 2])
  if KEYS[3] then redis.call('ZADD', KEYS[3], 0, member(ARGV[i])) end
end
return {'OK'}
`)

// resolveScript ends transaction ARGV[1]'s intents on fields ARGV[3:] of KEYS[1]: it
// applies them when ARGV[2] is "1" (committed) and drops them otherwise (aborted). It
// returns, for each field, how many ids its posting gained less how many it lost: 0 for
// a record, or when the field holds no intent of that transaction (resolved already).
// KEYS[3], when given, is the bucket's sorted set of fields: a field left empty leaves it.
var resolveScript = newScript(luaApply + luaMember + `
local out = {}
for i = 3, #ARGV do
  local f = ARGV[i]
  local l = redis.call('HGET', KEYS[2], f)
  local delta = 0
  if l and string.sub(l, 1, 16) == ARGV[1] then
    if ARGV[2] == '1' then delta = apply(KEYS[1], f, string.sub(l, 17)) end
    redis.call('HDEL', KEYS[2], f)
    if KEYS[3] and redis.call('HEXISTS', KEYS[1], f) == 0 then redis.call('ZREM', KEYS[3], member(f)) end
  end
  out[#out + 1] = delta
end
return out
`)

// luaMember is the scripts' member of a field in an ordered bucket's sorted set: its
// length (4 bytes, big-endian), then the field, so that the set sorts by length first.
const luaMember = `
local function member(f)
  local n = #f
  return string.char(math.floor(n / 16777216) % 256, math.floor(n / 65536) % 256, math.floor(n / 256) % 256, n % 256) .. f
end
`

// luaApply is the scripts' apply(k, f, intent): it applies a committed intent to field f
// of bucket k (a record's "n" and value, or "d"; a posting's "+id" and "-id" joined by
// commas, keeping the ids sorted as appendIDs does) and returns how many ids the posting
// gained less how many it lost.
const luaApply = `
local function less(a, b)
  if #a ~= #b then return #a < #b end
  return a < b
end
local function apply(k, f, intent)
  local c = string.sub(intent, 1, 1)
  if c == 'n' then redis.call('HSET', k, f, string.sub(intent, 2)); return 0 end
  if c == 'd' then redis.call('HDEL', k, f); return 0 end
  local set = {}
  for id in string.gmatch(redis.call('HGET', k, f) or '', '%d+') do set[id] = true end
  local delta = 0
  for op, id in string.gmatch(intent, '([+-])(%d+)') do
    if op == '+' and not set[id] then set[id] = true; delta = delta + 1 end
    if op == '-' and set[id] then set[id] = nil; delta = delta - 1 end
  end
  local ids = {}
  for id in pairs(set) do ids[#ids + 1] = id end
  if #ids == 0 then redis.call('HDEL', k, f); return delta end
  table.sort(ids, less)
  redis.call('HSET', k, f, table.concat(ids, ','))
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

// readScript reads field ARGV[1] of bucket KEYS[1] and the intent on it at one moment:
// {1 or 0 (the field exists), its value or "", the intent or ""}. Two HGETs could see
// the intent resolved between them, and the field as it was before.
var readScript = newScript(`
local v = redis.call('HGET', KEYS[1], ARGV[1])
local l = redis.call('HGET', KEYS[2], ARGV[1])
if v then return {1, v, l or ''} end
return {0, '', l or ''}
`)

// readAllScript reads bucket KEYS[1] and its intents KEYS[2] whole, at one moment:
// {fields and values, fields and intents}.
var readAllScript = newScript(`
return {redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2])}
`)
