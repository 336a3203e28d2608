-- Gives the tasks of consumers whose heartbeat key expired back to the ready set.
-- Returns the reclaimed task ids, sorted.
local q = KEYS[1]
local reclaimed = {}
for _, c in ipairs(redis.call('SMEMBERS', q .. ':consumers')) do
  if redis.call('EXISTS', q .. ':hb:' .. c) == 0 then
    for _, id in ipairs(redis.call('SMEMBERS', q .. ':owned:' .. c)) do
      local task = q .. ':task:' .. id
      redis.call('ZREM', q .. ':inflight', id)
      local f = redis.call('HMGET', task, 'part', 'prio', 'seq')
      if f[1] ~= '' then redis.call('DEL', q .. ':plock:' .. f[1]) end
      redis.call('ZADD', q .. ':ready', tonumber(f[2]) * 1e9 - tonumber(f[3]), id)
      reclaimed[#reclaimed + 1] = id
    end
    redis.call('DEL', q .. ':owned:' .. c)
    redis.call('SREM', q .. ':consumers', c)
  end
end
table.sort(reclaimed)
return reclaimed
