-- Acknowledges tasks ARGV[2..] of consumer ARGV[1]: deletes them and makes the next task of
-- their partition ready. A task the consumer no longer owns (reclaimed) is not acknowledged.
-- Returns the number acknowledged.
local q, consumer = KEYS[1], ARGV[1]
local acked = 0
for i = 2, #ARGV do
  local id = ARGV[i]
  if redis.call('SREM', q .. ':owned:' .. consumer, id) == 1 then
    local task = q .. ':task:' .. id
    local part = redis.call('HGET', task, 'part')
    redis.call('ZREM', q .. ':inflight', id)
    if part ~= '' then
      local plist = q .. ':part:' .. part
      redis.call('LREM', plist, 1, id)
      redis.call('DEL', q .. ':plock:' .. part)
      local nxt = redis.call('LINDEX', plist, 0)
      if nxt then
        local f = redis.call('HMGET', q .. ':task:' .. nxt, 'prio', 'seq')
        redis.call('ZADD', q .. ':ready', tonumber(f[1]) * 1e9 - tonumber(f[2]), nxt)
      end
    end
    redis.call('DEL', task)
    redis.call('INCR', q .. ':done')
    acked = acked + 1
  end
end
return acked
