#include "types/lcs.h"

#include <algorithm>
#include <memory>
#include <new>

namespace vireo {

uint64_t LcsTableBytes(size_t a_len, size_t b_len) {
  uint64_t rows = static_cast<uint64_t>(a_len) + 1;
  uint64_t cols = static_cast<uint64_t>(b_len) + 1;
  uint64_t cells;
  uint64_t bytes;
  if (__builtin_mul_overflow(rows, cols, &cells) ||
      __builtin_mul_overflow(cells, sizeof(uint32_t), &bytes)) {
    return UINT64_MAX;
  }
  return bytes;
}

uint32_t LcsLength(std::string_view a, std::string_view b) {
  // Two rows over the shorter string: LEN never needs the path through the table.
  if (a.size() < b.size()) std::swap(a, b);
  std::vector<uint32_t> prev(b.size() + 1, 0);
  std::vector<uint32_t> cur(b.size() + 1, 0);
  for (size_t i = 1; i <= a.size(); ++i) {
    const char ai = a[i - 1];
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = ai == b[j - 1] ? prev[j - 1] + 1 : std::max(prev[j], cur[j - 1]);
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

bool ComputeLcs(std::string_view a, std::string_view b, const LcsOptions& options,
                LcsResult* result) {
  const size_t alen = a.size();
  const size_t blen = b.size();
  const size_t stride = blen + 1;
  const size_t cells = (alen + 1) * stride;
  std::unique_ptr<uint32_t[]> table(new (std::nothrow) uint32_t[cells]);
  if (table == nullptr) return false;
  auto cell = [&](size_t i, size_t j) -> uint32_t& { return table[i * stride + j]; };

  // cell(i, j) is the LCS length of a[0..i) and b[0..j).
  for (size_t j = 0; j <= blen; ++j) cell(0, j) = 0;
  for (size_t i = 1; i <= alen; ++i) {
    uint32_t* row = &cell(i, 0);
    const uint32_t* above = &cell(i - 1, 0);
    const char ai = a[i - 1];
    row[0] = 0;
    for (size_t j = 1; j <= blen; ++j) {
      row[j] = ai == b[j - 1] ? above[j - 1] + 1 : std::max(above[j], row[j - 1]);
    }
  }

  result->length = cell(alen, blen);
  result->sequence.clear();
  result->matches.clear();
  if (!options.want_sequence && !options.want_matches) return true;
  if (options.want_sequence) result->sequence.resize(result->length);

  // Walk back from the end. Every diagonal step is a matching byte; a maximal run of diagonal
  // steps is one match, closed by the next non-diagonal step or by reaching a string's start.
  size_t remaining = result->length;
  bool in_run = false;
  LcsMatch run;
  auto close_run = [&] {
    if (options.want_matches &&
        (options.min_match_len == 0 || run.length() >= options.min_match_len)) {
      result->matches.push_back(run);
    }
    in_run = false;
  };
  size_t i = alen;
  size_t j = blen;
  while (i > 0 && j > 0) {
    if (a[i - 1] == b[j - 1]) {
      if (options.want_sequence) result->sequence[--remaining] = a[i - 1];
      const auto ai = static_cast<uint32_t>(i - 1);
      const auto bj = static_cast<uint32_t>(j - 1);
      if (in_run) {
        // The previous step was the diagonal neighbour, so the run simply grows backwards.
        run.a_start = ai;
        run.b_start = bj;
      } else {
        run = LcsMatch{ai, ai, bj, bj};
        in_run = true;
      }
      --i;
      --j;
      if (i == 0 || j == 0) close_run();
    } else {
      if (in_run) close_run();
      if (cell(i - 1, j) > cell(i, j - 1)) {
        --i;
      } else {
        --j;
      }
    }
  }
  return true;
}

}  // namespace vireo
