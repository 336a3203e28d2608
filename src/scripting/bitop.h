// vireo's own `bit` Lua module with the semantics of LuaBitOp 1.0 (as Redis 7.2 bundles it):
// bit.tobit tohex bnot band bor bxor lshift rshift arshift rol ror bswap on 32-bit integers.
// bit.tohex clamps its width, so INT32_MIN asks for 8 upper-case digits instead of overflowing
// a stack buffer (CVE-2024-31449).
#pragma once

struct lua_State;

namespace vireo {

// Returns the bit module table.
int OpenBit(lua_State* L);

}  // namespace vireo
