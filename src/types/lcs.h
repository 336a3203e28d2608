// Longest common subsequence of two byte strings, computed the way the LCS command reports it:
// the subsequence itself, its length, and the runs of consecutive matching bytes ("matches").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vireo {

// One run of bytes common to both strings: a[a_start..a_end] == b[b_start..b_end], inclusive.
struct LcsMatch {
  uint32_t a_start = 0;
  uint32_t a_end = 0;
  uint32_t b_start = 0;
  uint32_t b_end = 0;

  uint32_t length() const { return a_end - a_start + 1; }
  bool operator==(const LcsMatch&) const = default;
};

struct LcsOptions {
  bool want_sequence = true;
  bool want_matches = false;
  // Matches shorter than this are left out of `matches` (0 keeps them all). They still count
  // towards the length and the sequence.
  uint64_t min_match_len = 0;
};

struct LcsResult {
  uint32_t length = 0;
  std::string sequence;
  // Ordered from the end of the strings towards their start, as Redis replies with them.
  std::vector<LcsMatch> matches;
};

// Inputs this long or longer can't be indexed by the 32-bit table cells.
inline constexpr size_t kLcsMaxInputLength = UINT32_MAX - 1;

// The size in bytes of the dynamic-programming table ComputeLcs allocates for these lengths.
// The LCS command refuses to run when it exceeds proto-max-bulk-len.
uint64_t LcsTableBytes(size_t a_len, size_t b_len);

// Only the length, in memory proportional to the shorter string.
uint32_t LcsLength(std::string_view a, std::string_view b);

// The full computation. Returns false if the table could not be allocated. Inputs must be
// shorter than kLcsMaxInputLength.
//
// When several subsequences are longest, the one reported is found by walking the table back
// from the ends of both strings, preferring to drop a byte of `b` over a byte of `a` on ties;
// this reproduces Redis's choice, so sequences and match positions are identical.
bool ComputeLcs(std::string_view a, std::string_view b, const LcsOptions& options,
                LcsResult* result);

}  // namespace vireo
