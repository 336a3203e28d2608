// A bounds-checked replacement for Lua 5.1's global `unpack` (CVE-2025-46817): the stock
// version computes the element count in int arithmetic, so ranges like unpack({}, 0, 2^31-1)
// overflow and push past the stack. vireo's counts in 64 bits and refuses any range the Lua
// stack cannot hold with Redis's "too many results to unpack".
#pragma once

struct lua_State;

namespace vireo {

// Installs the guarded `unpack` as a global; returns nothing (an opener for OpenLibraries).
int OpenSafeUnpack(lua_State* L);

}  // namespace vireo
