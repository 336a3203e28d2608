// Glob-style matching with the exact semantics of Redis's stringmatchlen, used by KEYS, SCAN
// MATCH, PSUBSCRIBE, CONFIG GET and friends.
#pragma once

#include <string_view>

namespace vireo {

// Matches str against pattern, byte-wise and binary-safe:
//   *        any run of bytes (including none)
//   ?        exactly one byte
//   [abc]    one byte from the set; [^abc] one byte not in it; [a-z] a range, reversed ranges
//            like [z-a] mean the same as [a-z]; \x inside brackets is a literal x
//   \x       a literal x; a trailing lone backslash is a literal backslash
// Redis quirks reproduced on purpose:
//   - an unterminated bracket ("[ab") behaves as if closed at the end of the pattern;
//   - "[a-]" is a range from 'a' to ']' (so the bracket continues past that ']');
//   - range bounds and bytes compare as signed chars (as on x86-64 Redis), so bytes >= 0x80
//     sort below ASCII inside ranges;
//   - with nocase, ASCII letters fold but an escaped byte inside brackets still compares exactly;
//   - the empty string matches only the empty pattern: GlobMatch("*", "") is false. KEYS and
//     SCAN special-case the pattern "*"; callers wanting that must do the same.
//   - matching gives up (no match) beyond 1000 nested '*' and stops retrying longer '*' spans
//     once the rest of the pattern failed at every position, so adversarial patterns such as
//     "a*a*a*...b" against long subjects run in polynomial time.
bool GlobMatch(std::string_view pattern, std::string_view str, bool nocase = false);

}  // namespace vireo
