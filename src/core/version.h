// The Redis version vireo answers as: INFO, HELLO, the RDB header's aux field and the scripts'
// redis.REDIS_VERSION all say it, since client libraries enable features by it.
#pragma once

#include <string_view>

namespace vireo {

inline constexpr std::string_view kRedisCompatVersion = "7.2.4";

}  // namespace vireo
