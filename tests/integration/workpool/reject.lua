-- Rejects task ARGV[2] of consumer ARGV[1]. With ARGV[3] == '1' and fewer than ARGV[4]
-- attempts it goes back to the ready set (still the head of its partition): returns 1.
-- Otherwise it is dead-lettered and its partition moves on: returns 2. Not owned: 0.
local q, consumer, id = KEYS[1], ARGV[1], ARGV[2]
local requeue, max_attempts = ARGV[3] == '1', tonumber(ARGV[4])
if redis.call('SREM', q .. ':owned:' .. consumer, id) == 0 then return 0 end
local task = q .. ':task:' .. id
redis.call('ZREM', q .. ':inflight', id)
local f = redis.call('HMGET', task, 'part', 'attempts', 'prio', 'seq')
local part, attempts = f[1], tonumber(f[2])
if part ~= '' then redis.call('DEL', q .. ':plock:' .. part) end
if requeue and attempts < max_attempts then
  redis.call('ZADD', q .. ':ready', tonumber(f[3]) * 1e9 - tonumber(f[4]), id)
  return 1
end
redis.call('RPUSH', q .. ':dead', id)
if part ~= '' then
  local plist = q .. ':part:' .. part
  redis.call('LREM', plist, 1, id)
  local nxt = redis.call('LINDEX', plist, 0)
  if nxt then
    local g = redis.call('HMGET', q .. ':task:' .. nxt, 'prio', 'seq')
    redis.call('ZADD', q .. ':ready', tonumber(g[1]) * 1e9 - tonumber(g[2]), nxt)
  end
end
return 2
