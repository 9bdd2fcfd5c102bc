package redisstore

// The Lua scripts run on one key each, so each runs on the node that owns the key's
// slot, atomically there. A key is a Redis hash:
//
//   - a posting: field = id (8 bytes, big-endian) -> "" for every committed id;
//     "+"/"-" + id (9 bytes) for an id a pending transaction adds or removes;
//   - a record: "v" -> the committed record; "n" -> the record a pending transaction
//     puts, "d" -> present when it deletes it;
//   - either: "L" -> the id of the pending transaction (the lock), absent when none.
//
// Field lengths keep the kinds apart: ids are 8 bytes, pending ids 9, the rest 1.

// prepScript places a transaction's intent on KEYS[1]: ARGV[1] is the transaction,
// ARGV[2] a condition ("" for none, else "=" followed by the 8-byte ids the committed
// posting must hold exactly), ARGV[3:] field, value pairs to set. It returns {"L",
// holder} when another transaction holds the key, {"C"} when the condition fails, and
// {"OK"} once the intent is placed; nothing changes unless it returns OK.
const prepScript = `
local l = redis.call('HGET', KEYS[1], 'L')
if l and l ~= ARGV[1] then return {'L', l} end
local cond = ARGV[2]
if cond ~= '' then
  local want = {}
  local n = 0
  for i = 2, #cond, 8 do want[string.sub(cond, i, i + 7)] = true; n = n + 1 end
  local have = 0
  for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
    if #f == 8 then
      if not want[f] then return {'C'} end
      have = have + 1
    end
  end
  if have ~= n then return {'C'} end
end
if #ARGV > 2 then
  redis.call('HSET', KEYS[1], 'L', ARGV[1], unpack(ARGV, 3))
else
  redis.call('HSET', KEYS[1], 'L', ARGV[1])
end
return {'OK'}
`

// resolveScript ends transaction ARGV[1]'s intent on KEYS[1]: it applies it when
// ARGV[2] is "1" (committed) and drops it otherwise (aborted). It returns how many ids
// the posting gained less how many it lost, 0 for a record or when the key holds no
// intent of that transaction (resolved already).
const resolveScript = `
if redis.call('HGET', KEYS[1], 'L') ~= ARGV[1] then return 0 end
local c = ARGV[2] == '1'
local delta = 0
for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
  if #f == 9 then
    local k = string.sub(f, 1, 1)
    if c and k == '+' then delta = delta + redis.call('HSET', KEYS[1], string.sub(f, 2), '') end
    if c and k == '-' then delta = delta - redis.call('HDEL', KEYS[1], string.sub(f, 2)) end
    redis.call('HDEL', KEYS[1], f)
  end
end
if c then
  local n = redis.call('HGET', KEYS[1], 'n')
  if n then redis.call('HSET', KEYS[1], 'v', n) end
  if redis.call('HEXISTS', KEYS[1], 'd') == 1 then redis.call('HDEL', KEYS[1], 'v') end
end
redis.call('HDEL', KEYS[1], 'L', 'n', 'd')
return delta
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
const bumpScript = less8 + `
local c = redis.call('GET', KEYS[1])
if not c or less8(c, ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end
return 1
`

// nextScript increments the id counter KEYS[1] and returns it, or the error NOID when it
// is the largest uint64.
const nextScript = `
local c = redis.call('GET', KEYS[1]) or string.rep('\0', 8)
if c == string.rep('\255', 8) then return redis.error_reply('NOID') end
local b = {string.byte(c, 1, 8)}
local i = 8
while b[i] == 255 do b[i] = 0; i = i - 1 end
b[i] = b[i] + 1
local n = string.char(unpack(b))
redis.call('SET', KEYS[1], n)
return n
`
