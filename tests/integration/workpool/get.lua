-- Takes up to ARGV[2] tasks for consumer ARGV[1], highest priority first (ZREVRANGE on
-- priority * 1e9 - sequence), after moving due delayed tasks (scores are due times from
-- TIME) to the ready set. A partitioned task is taken only with its partition's lock.
-- ARGV[3]: visibility timeout in ms, ARGV[4]: heartbeat expiry in seconds.
-- Returns {{id, payload, attempts}, ...}.
local q, consumer = KEYS[1], ARGV[1]
local n, vis, hb = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local function score(task)
  local f = redis.call('HMGET', task, 'prio', 'seq')
  return tonumber(f[1]) * 1e9 - tonumber(f[2])
end

for _, id in ipairs(redis.call('ZRANGEBYSCORE', q .. ':delayed', '-inf', now, 'LIMIT', 0, 100)) do
  redis.call('ZREM', q .. ':delayed', id)
  local task = q .. ':task:' .. id
  local part = redis.call('HGET', task, 'part')
  if part == '' or redis.call('RPUSH', q .. ':part:' .. part, id) == 1 then
    redis.call('ZADD', q .. ':ready', score(task), id)
  end
end

redis.call('SET', q .. ':hb:' .. consumer, now, 'EX', hb)
redis.call('SADD', q .. ':consumers', consumer)
local out = {}
for _, id in ipairs(redis.call('ZREVRANGE', q .. ':ready', 0, n - 1)) do
  local task = q .. ':task:' .. id
  local part = redis.call('HGET', task, 'part')
  if part == '' or redis.call('SET', q .. ':plock:' .. part, consumer, 'PX', vis, 'NX') then
    redis.call('ZREM', q .. ':ready', id)
    local attempts = redis.call('HINCRBY', task, 'attempts', 1)
    redis.call('HSET', task, 'owner', consumer)
    redis.call('SADD', q .. ':owned:' .. consumer, id)
    redis.call('ZADD', q .. ':inflight', now + vis, id)
    out[#out + 1] = {id, redis.call('HGET', task, 'payload'), attempts}
  end
end
return out
