#include "util/glob.h"

#include <cstddef>
#include <utility>

namespace vireo {
namespace {

// Redis folds with the C tolower() in the "C" locale, i.e. ASCII letters only.
int FoldCase(int c) { return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c; }

// Bytes as Redis compares them: plain char, which is signed on x86-64. Fixing the signedness keeps
// range checks on bytes >= 0x80 identical to the reference server on every platform.
int Byte(char c) { return static_cast<signed char>(c); }

// Deeper '*' recursion than this is refused outright; the limit is Redis's.
constexpr int kMaxNesting = 1000;

class Matcher {
 public:
  explicit Matcher(bool nocase) : nocase_(nocase) {}

  // The algorithm walks the pattern with a cursor and peeks one or two bytes ahead; the C
  // original relies on a NUL terminator there, which Pat() supplies for positions past the end.
  bool Match(std::string_view pat, std::string_view str, int nesting) {
    if (nesting > kMaxNesting) return false;
    size_t p = 0;
    size_t s = 0;
    auto Pat = [&pat](size_t i) -> char { return i < pat.size() ? pat[i] : '\0'; };

    while (p < pat.size() && s < str.size()) {
      switch (pat[p]) {
        case '*': {
          while (Pat(p + 1) == '*') ++p;
          if (p + 1 == pat.size()) return true;
          for (; s < str.size(); ++s) {
            if (Match(pat.substr(p + 1), str.substr(s), nesting + 1)) return true;
            if (give_up_longer_) return false;
          }
          // The rest of the pattern matched nowhere in the rest of the string. Any earlier '*'
          // that tried a longer span would only hand the rest an even shorter suffix, so every
          // pending alternative is doomed: tell them all to stop.
          give_up_longer_ = true;
          return false;
        }
        case '?':
          ++s;
          break;
        case '[': {
          ++p;
          const bool negate = Pat(p) == '^';
          if (negate) ++p;
          const int c = Byte(str[s]);
          bool match = false;
          for (;;) {
            if (Pat(p) == '\\' && pat.size() - p >= 2) {
              // An escaped byte is compared exactly, even when matching without case.
              ++p;
              if (Byte(pat[p]) == c) match = true;
            } else if (Pat(p) == ']') {
              break;
            } else if (p == pat.size()) {
              // Unterminated: step back onto the last byte so the shared advance below lands
              // exactly at the end of the pattern.
              --p;
              break;
            } else if (pat.size() - p >= 3 && pat[p + 1] == '-') {
              int lo = Byte(pat[p]);
              int hi = Byte(pat[p + 2]);
              if (lo > hi) std::swap(lo, hi);
              int x = c;
              if (nocase_) {
                lo = FoldCase(lo);
                hi = FoldCase(hi);
                x = FoldCase(x);
              }
              p += 2;
              if (x >= lo && x <= hi) match = true;
            } else if (nocase_ ? FoldCase(Byte(pat[p])) == FoldCase(c) : Byte(pat[p]) == c) {
              match = true;
            }
            ++p;
          }
          if (negate) match = !match;
          if (!match) return false;
          ++s;
          break;
        }
        case '\\':
          // A trailing backslash has nothing to escape and matches itself.
          if (pat.size() - p >= 2) ++p;
          [[fallthrough]];
        default:
          if (nocase_ ? FoldCase(Byte(pat[p])) != FoldCase(Byte(str[s])) : pat[p] != str[s]) {
            return false;
          }
          ++s;
          break;
      }
      ++p;
      if (s == str.size()) {
        // Trailing stars match the empty remainder.
        while (Pat(p) == '*') ++p;
        break;
      }
    }
    return p == pat.size() && s == str.size();
  }

 private:
  const bool nocase_;
  bool give_up_longer_ = false;
};

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view str, bool nocase) {
  Matcher matcher(nocase);
  return matcher.Match(pattern, str, 0);
}

}  // namespace vireo
