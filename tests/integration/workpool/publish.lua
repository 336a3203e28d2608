-- Publishes tasks. KEYS[1]: the queue's key prefix.
-- ARGV: groups of five: id, payload, partition ('' = unordered), priority, delay in ms.
-- Idempotent: an id published before (SET NX on its marker) is skipped.
-- Returns how many tasks were created.
local q = KEYS[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local created = 0
for i = 1, #ARGV, 5 do
  local id, payload, part = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local prio, delay = tonumber(ARGV[i + 3]), tonumber(ARGV[i + 4])
  if redis.call('SET', q .. ':id:' .. id, '1', 'NX') then
    local seq = redis.call('INCR', q .. ':seq')
    redis.call('HSET', q .. ':task:' .. id, 'payload', payload, 'part', part, 'prio', prio,
                'seq', seq, 'attempts', 0)
    if delay > 0 then
      redis.call('ZADD', q .. ':delayed', now + delay, id)
    elseif part ~= '' then
      -- Only the head of a partition is ever ready: that is what keeps it in order.
      if redis.call('RPUSH', q .. ':part:' .. part, id) == 1 then
        redis.call('ZADD', q .. ':ready', prio * 1e9 - seq, id)
      end
    else
      redis.call('ZADD', q .. ':ready', prio * 1e9 - seq, id)
    end
    created = created + 1
  end
end
return created
