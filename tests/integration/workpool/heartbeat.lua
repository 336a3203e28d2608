-- Consumer ARGV[1] is alive for ARGV[2] more seconds.
redis.call('SET', KEYS[1] .. ':hb:' .. ARGV[1], '1', 'EX', ARGV[2])
redis.call('SADD', KEYS[1] .. ':consumers', ARGV[1])
return 1
