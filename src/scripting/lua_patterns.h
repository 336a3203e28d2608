// vireo's own string.find/match/gmatch/gfind/gsub (Lua 5.1 patterns, with a step budget that
// keeps a script killable) and string.rep (sized up front, so memory limits apply at once).
#pragma once

extern "C" {
#include <lua.h>
}

namespace vireo {

class LuaEngine;

// Replaces those functions in the global `string` table (before it is made read-only).
void InstallStringFunctions(lua_State* L, LuaEngine* engine);

}  // namespace vireo
