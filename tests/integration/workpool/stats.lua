-- Counts: {ready, delayed, inflight, dead, done}.
local q = KEYS[1]
return {redis.call('ZCARD', q .. ':ready'), redis.call('ZCARD', q .. ':delayed'),
        redis.call('ZCARD', q .. ':inflight'), redis.call('LLEN', q .. ':dead'),
        tonumber(redis.call('GET', q .. ':done') or '0')}
