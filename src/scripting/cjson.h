// vireo's own `cjson` Lua module: the API and the exact output of the lua-cjson 2.1.0 that
// Redis 7.2 bundles (numbers as %.14g, '/' escaped, sparse-array and nesting rules, error
// texts), written so that every size is checked and no input can overflow a buffer
// (CVE-2022-24834) or abort the server.
#pragma once

struct lua_State;

namespace vireo {

// Returns a new cjson module table (cjson.new() makes further independent ones).
int OpenCjson(lua_State* L);

}  // namespace vireo
