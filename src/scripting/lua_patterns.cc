// Lua 5.1 pattern matching (string.find, match, gmatch, gsub) and string.rep, written for
// vireo so that no single string call can run unbounded.
//
// The stock matcher backtracks inside one C call: `string.find(string.rep('a', 5000),
// string.rep('a?', 5000) .. string.rep('a', 5000))` takes exponential time, and the script-time
// hook (which only fires between Lua instructions) never gets control, so neither
// busy-reply-threshold nor SCRIPT KILL can act. Here every matcher step is counted, and every
// kStepsPerCheck steps the engine's time check runs: it serves other clients once the script
// is past busy-reply-threshold and raises the kill error after SCRIPT KILL. The recursion depth
// is bounded too (the stock matcher recurses once per pattern item and can exhaust the C stack).
//
// Results and error texts are those of Lua 5.1.5, including its quirks: the pattern ends at its
// first NUL byte, '^' is only an anchor for find/match/gsub, and string.rep's count is a C int.
#include "scripting/lua_patterns.h"

#include <cctype>
#include <cstddef>
#include <cstring>

#include "scripting/lua_engine.h"

namespace vireo {
namespace {

constexpr int kMaxCaptures = 32;
constexpr ptrdiff_t kCapUnfinished = -1;
constexpr ptrdiff_t kCapPosition = -2;
constexpr char kEsc = '%';
constexpr const char* kSpecials = "^$*+?.([%-";
// Steps between two looks at the clock (as many as the count hook's instructions).
constexpr unsigned kStepsPerCheck = 100000;
// Nesting of the matcher's recursion; deeper patterns fail with "pattern too complex" (Lua
// 5.2's error) rather than overflowing the C stack. Stock 5.1 recurses without a bound and
// crashes somewhere past 100,000 levels on an 8 MB stack (50,000 under ASan); 25,000 levels
// take about 2 MB even in the sanitizer build and still cover every pattern of 5.1 that fits.
constexpr int kMaxDepth = 25000;

struct Capture {
  const char* init;
  ptrdiff_t len;
};

// Plain data only: the matcher may leave through lua_error (a longjmp) at any step.
struct MatchState {
  lua_State* L;
  LuaEngine* engine;
  const char* src_init;
  const char* src_end;
  const char* p_end;  // the pattern's first NUL (Lua 5.1 reads patterns as C strings)
  int level;
  int depth;
  unsigned steps;
  Capture capture[kMaxCaptures];
};

LuaEngine* EngineOf(lua_State* L) {
  return static_cast<LuaEngine*>(lua_touserdata(L, lua_upvalueindex(1)));
}

void Step(MatchState* ms) {
  if (++ms->steps % kStepsPerCheck == 0) ms->engine->CheckTime(ms->L);
}

bool MatchClass(int c, int cl) {
  bool res;
  switch (std::tolower(cl)) {
    case 'a':
      res = std::isalpha(c) != 0;
      break;
    case 'c':
      res = std::iscntrl(c) != 0;
      break;
    case 'd':
      res = std::isdigit(c) != 0;
      break;
    case 'l':
      res = std::islower(c) != 0;
      break;
    case 'p':
      res = std::ispunct(c) != 0;
      break;
    case 's':
      res = std::isspace(c) != 0;
      break;
    case 'u':
      res = std::isupper(c) != 0;
      break;
    case 'w':
      res = std::isalnum(c) != 0;
      break;
    case 'x':
      res = std::isxdigit(c) != 0;
      break;
    case 'z':
      res = c == 0;
      break;
    default:
      return cl == c;
  }
  return std::isupper(cl) != 0 ? !res : res;
}

// The end of the single-character class starting at p.
const char* ClassEnd(MatchState* ms, const char* p) {
  char first = *p++;
  if (first == kEsc) {
    if (p >= ms->p_end) luaL_error(ms->L, "malformed pattern (ends with '%%')");
    return p + 1;
  }
  if (first == '[') {
    if (p < ms->p_end && *p == '^') ++p;
    // The first member is taken before looking for ']', so "[]]" is the set of ']'.
    do {
      if (p >= ms->p_end) luaL_error(ms->L, "malformed pattern (missing ']')");
      if (*p++ == kEsc && p < ms->p_end) ++p;
    } while (p >= ms->p_end || *p != ']');
    return p + 1;
  }
  return p;
}

// Whether c is in the set [p, ec] (p at '[', ec at the closing ']').
bool MatchBracket(int c, const char* p, const char* ec) {
  bool in = true;
  if (p[1] == '^') {
    in = false;
    ++p;
  }
  while (++p < ec) {
    if (*p == kEsc) {
      ++p;
      if (MatchClass(c, static_cast<unsigned char>(*p))) return in;
    } else if (p[1] == '-' && p + 2 < ec) {
      p += 2;
      if (static_cast<unsigned char>(p[-2]) <= c && c <= static_cast<unsigned char>(*p)) {
        return in;
      }
    } else if (static_cast<unsigned char>(*p) == c) {
      return in;
    }
  }
  return !in;
}

bool SingleMatch(const MatchState* ms, const char* s, const char* p, const char* ep) {
  if (s >= ms->src_end) return false;
  int c = static_cast<unsigned char>(*s);
  switch (*p) {
    case '.':
      return true;
    case kEsc:
      return MatchClass(c, static_cast<unsigned char>(p[1]));
    case '[':
      return MatchBracket(c, p, ep - 1);
    default:
      return static_cast<unsigned char>(*p) == c;
  }
}

const char* Match(MatchState* ms, const char* s, const char* p);

const char* MatchBalance(MatchState* ms, const char* s, const char* p) {
  if (p + 1 >= ms->p_end) luaL_error(ms->L, "unbalanced pattern");
  if (s >= ms->src_end || *s != *p) return nullptr;
  char open = p[0], close = p[1];
  int depth = 1;
  while (++s < ms->src_end) {
    Step(ms);
    if (*s == close) {
      if (--depth == 0) return s + 1;
    } else if (*s == open) {
      ++depth;
    }
  }
  return nullptr;
}

const char* MaxExpand(MatchState* ms, const char* s, const char* p, const char* ep) {
  ptrdiff_t n = 0;
  while (SingleMatch(ms, s + n, p, ep)) {
    Step(ms);
    ++n;
  }
  // Longest first, giving back one character at a time.
  for (; n >= 0; --n) {
    if (const char* res = Match(ms, s + n, ep + 1); res != nullptr) return res;
  }
  return nullptr;
}

const char* MinExpand(MatchState* ms, const char* s, const char* p, const char* ep) {
  for (;;) {
    if (const char* res = Match(ms, s, ep + 1); res != nullptr) return res;
    if (!SingleMatch(ms, s, p, ep)) return nullptr;
    ++s;
  }
}

const char* StartCapture(MatchState* ms, const char* s, const char* p, ptrdiff_t what) {
  if (ms->level >= kMaxCaptures) luaL_error(ms->L, "too many captures");
  ms->capture[ms->level].init = s;
  ms->capture[ms->level].len = what;
  ++ms->level;
  const char* res = Match(ms, s, p);
  if (res == nullptr) --ms->level;
  return res;
}

const char* EndCapture(MatchState* ms, const char* s, const char* p) {
  int open = ms->level - 1;
  while (open >= 0 && ms->capture[open].len != kCapUnfinished) --open;
  if (open < 0) luaL_error(ms->L, "invalid pattern capture");
  ms->capture[open].len = s - ms->capture[open].init;
  const char* res = Match(ms, s, p);
  if (res == nullptr) ms->capture[open].len = kCapUnfinished;
  return res;
}

const char* MatchBackReference(MatchState* ms, const char* s, int digit) {
  int index = digit - '1';
  if (index < 0 || index >= ms->level || ms->capture[index].len == kCapUnfinished) {
    luaL_error(ms->L, "invalid capture index");
  }
  size_t len = static_cast<size_t>(ms->capture[index].len);
  if (static_cast<size_t>(ms->src_end - s) >= len &&
      std::memcmp(ms->capture[index].init, s, len) == 0) {
    return s + len;
  }
  return nullptr;
}

// Matches pattern p at s; the end of the match or nullptr. Tail positions loop instead of
// recursing.
const char* MatchItems(MatchState* ms, const char* s, const char* p) {
  for (;;) {
    Step(ms);
    if (p >= ms->p_end) return s;
    switch (*p) {
      case '(':
        if (p + 1 < ms->p_end && p[1] == ')') return StartCapture(ms, s, p + 2, kCapPosition);
        return StartCapture(ms, s, p + 1, kCapUnfinished);
      case ')':
        return EndCapture(ms, s, p + 1);
      case '$':
        if (p + 1 == ms->p_end) return s == ms->src_end ? s : nullptr;
        break;
      case kEsc:
        if (p + 1 < ms->p_end && p[1] == 'b') {
          s = MatchBalance(ms, s, p + 2);
          if (s == nullptr) return nullptr;
          p += 4;
          continue;
        }
        if (p + 1 < ms->p_end && p[1] == 'f') {
          p += 2;
          if (p >= ms->p_end || *p != '[') luaL_error(ms->L, "missing '[' after '%%f' in pattern");
          const char* ep = ClassEnd(ms, p);
          int prev = s == ms->src_init ? 0 : static_cast<unsigned char>(s[-1]);
          int cur = s < ms->src_end ? static_cast<unsigned char>(*s) : 0;
          if (MatchBracket(prev, p, ep - 1) || !MatchBracket(cur, p, ep - 1)) return nullptr;
          p = ep;
          continue;
        }
        if (p + 1 < ms->p_end && std::isdigit(static_cast<unsigned char>(p[1])) != 0) {
          s = MatchBackReference(ms, s, static_cast<unsigned char>(p[1]));
          if (s == nullptr) return nullptr;
          p += 2;
          continue;
        }
        break;
      default:
        break;
    }
    // A single-character class, perhaps with a quantifier.
    const char* ep = ClassEnd(ms, p);
    bool m = SingleMatch(ms, s, p, ep);
    char quantifier = ep < ms->p_end ? *ep : '\0';
    switch (quantifier) {
      case '?':
        if (m) {
          if (const char* res = Match(ms, s + 1, ep + 1); res != nullptr) return res;
        }
        p = ep + 1;
        continue;
      case '*':
        return MaxExpand(ms, s, p, ep);
      case '+':
        return m ? MaxExpand(ms, s + 1, p, ep) : nullptr;
      case '-':
        return MinExpand(ms, s, p, ep);
      default:
        if (!m) return nullptr;
        ++s;
        p = ep;
        continue;
    }
  }
}

const char* Match(MatchState* ms, const char* s, const char* p) {
  if (++ms->depth > kMaxDepth) luaL_error(ms->L, "pattern too complex");
  const char* res = MatchItems(ms, s, p);
  --ms->depth;
  return res;
}

void InitMatch(MatchState* ms, lua_State* L, const char* s, size_t ls, const char* p) {
  ms->L = L;
  ms->engine = EngineOf(L);
  ms->src_init = s;
  ms->src_end = s + ls;
  ms->p_end = p + std::strlen(p);
  ms->level = 0;
  ms->depth = 0;
  ms->steps = 0;
}

void PushOneCapture(MatchState* ms, int i, const char* s, const char* e) {
  if (i >= ms->level) {
    if (i != 0) luaL_error(ms->L, "invalid capture index");
    lua_pushlstring(ms->L, s, static_cast<size_t>(e - s));  // the whole match
    return;
  }
  ptrdiff_t len = ms->capture[i].len;
  if (len == kCapUnfinished) luaL_error(ms->L, "unfinished capture");
  if (len == kCapPosition) {
    lua_pushinteger(ms->L, ms->capture[i].init - ms->src_init + 1);
  } else {
    lua_pushlstring(ms->L, ms->capture[i].init, static_cast<size_t>(len));
  }
}

int PushCaptures(MatchState* ms, const char* s, const char* e) {
  int n = (ms->level == 0 && s != nullptr) ? 1 : ms->level;
  luaL_checkstack(ms->L, n, "too many captures");
  for (int i = 0; i < n; ++i) PushOneCapture(ms, i, s, e);
  return n;
}

ptrdiff_t RelativePosition(ptrdiff_t pos, size_t len) {
  if (pos < 0) pos += static_cast<ptrdiff_t>(len) + 1;
  return pos >= 0 ? pos : 0;
}

const char* FindPlain(const char* s, size_t ls, const char* p, size_t lp) {
  if (lp == 0) return s;
  if (lp > ls) return nullptr;
  const char* last = s + (ls - lp);
  for (const char* c = s; c <= last; ++c) {
    c = static_cast<const char*>(std::memchr(c, *p, static_cast<size_t>(last - c) + 1));
    if (c == nullptr) return nullptr;
    if (std::memcmp(c + 1, p + 1, lp - 1) == 0) return c;
  }
  return nullptr;
}

int FindOrMatch(lua_State* L, bool find) {
  size_t ls = 0, lp = 0;
  const char* s = luaL_checklstring(L, 1, &ls);
  const char* p = luaL_checklstring(L, 2, &lp);
  ptrdiff_t init = RelativePosition(luaL_optinteger(L, 3, 1), ls) - 1;
  if (init < 0) {
    init = 0;
  } else if (static_cast<size_t>(init) > ls) {
    init = static_cast<ptrdiff_t>(ls);
  }
  if (find && (lua_toboolean(L, 4) != 0 || std::strpbrk(p, kSpecials) == nullptr)) {
    const char* hit = FindPlain(s + init, ls - static_cast<size_t>(init), p, lp);
    if (hit != nullptr) {
      lua_pushinteger(L, hit - s + 1);
      lua_pushinteger(L, static_cast<lua_Integer>(hit - s + static_cast<ptrdiff_t>(lp)));
      return 2;
    }
    lua_pushnil(L);
    return 1;
  }
  MatchState ms;
  bool anchor = *p == '^';
  if (anchor) ++p;
  InitMatch(&ms, L, s, ls, p);
  const char* start = s + init;
  do {
    ms.level = 0;
    if (const char* end = Match(&ms, start, p); end != nullptr) {
      if (!find) return PushCaptures(&ms, start, end);
      lua_pushinteger(L, start - s + 1);
      lua_pushinteger(L, end - s);
      return PushCaptures(&ms, nullptr, nullptr) + 2;
    }
  } while (start++ < ms.src_end && !anchor);
  lua_pushnil(L);
  return 1;
}

int StrFind(lua_State* L) { return FindOrMatch(L, true); }
int StrMatch(lua_State* L) { return FindOrMatch(L, false); }

// The iterator gmatch returns: upvalues 1 engine, 2 subject, 3 pattern, 4 next position.
int GmatchNext(lua_State* L) {
  size_t ls = 0;
  const char* s = lua_tolstring(L, lua_upvalueindex(2), &ls);
  const char* p = lua_tostring(L, lua_upvalueindex(3));
  MatchState ms;
  InitMatch(&ms, L, s, ls, p);
  for (const char* src = s + lua_tointeger(L, lua_upvalueindex(4)); src <= ms.src_end; ++src) {
    ms.level = 0;
    if (const char* e = Match(&ms, src, p); e != nullptr) {
      lua_Integer next = e - s;
      if (e == src) ++next;  // an empty match moves on by one
      lua_pushinteger(L, next);
      lua_replace(L, lua_upvalueindex(4));
      return PushCaptures(&ms, src, e);
    }
  }
  return 0;
}

int StrGmatch(lua_State* L) {
  luaL_checkstring(L, 1);
  luaL_checkstring(L, 2);
  lua_settop(L, 2);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_pushinteger(L, 0);
  lua_pushcclosure(L, GmatchNext, 4);
  return 1;
}

// Appends the replacement string (argument 3) for the match [s, e).
void AddReplacementString(MatchState* ms, luaL_Buffer* b, const char* s, const char* e) {
  size_t l = 0;
  const char* news = lua_tolstring(ms->L, 3, &l);
  for (size_t i = 0; i < l; ++i) {
    if (news[i] != kEsc) {
      luaL_addchar(b, news[i]);
      continue;
    }
    ++i;  // a '%' at the very end takes the string's terminating NUL, as Lua 5.1 does
    unsigned char c = static_cast<unsigned char>(news[i]);
    if (std::isdigit(c) == 0) {
      luaL_addchar(b, news[i]);
    } else if (c == '0') {
      luaL_addlstring(b, s, static_cast<size_t>(e - s));
    } else {
      PushOneCapture(ms, c - '1', s, e);
      luaL_addvalue(b);
    }
  }
}

void AddReplacement(MatchState* ms, luaL_Buffer* b, const char* s, const char* e) {
  lua_State* L = ms->L;
  switch (lua_type(L, 3)) {
    case LUA_TNUMBER:
    case LUA_TSTRING:
      AddReplacementString(ms, b, s, e);
      return;
    case LUA_TFUNCTION: {
      lua_pushvalue(L, 3);
      int n = PushCaptures(ms, s, e);
      lua_call(L, n, 1);
      break;
    }
    default:  // a table
      PushOneCapture(ms, 0, s, e);
      lua_gettable(L, 3);
      break;
  }
  if (lua_toboolean(L, -1) == 0) {  // nil or false: keep the original text
    lua_pop(L, 1);
    lua_pushlstring(L, s, static_cast<size_t>(e - s));
  } else if (lua_isstring(L, -1) == 0) {
    luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
  }
  luaL_addvalue(b);
}

int StrGsub(lua_State* L) {
  size_t ls = 0;
  const char* src = luaL_checklstring(L, 1, &ls);
  const char* p = luaL_checkstring(L, 2);
  int tr = lua_type(L, 3);
  int max_s = static_cast<int>(luaL_optinteger(L, 4, static_cast<lua_Integer>(ls) + 1));
  luaL_argcheck(L,
                tr == LUA_TNUMBER || tr == LUA_TSTRING || tr == LUA_TFUNCTION || tr == LUA_TTABLE,
                3, "string/function/table expected");
  bool anchor = *p == '^';
  if (anchor) ++p;
  MatchState ms;
  InitMatch(&ms, L, src, ls, p);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  int n = 0;
  while (n < max_s) {
    ms.level = 0;
    const char* e = Match(&ms, src, p);
    if (e != nullptr) {
      ++n;
      AddReplacement(&ms, &b, src, e);
    }
    if (e != nullptr && e > src) {
      src = e;
    } else if (src < ms.src_end) {
      luaL_addchar(&b, *src++);
    } else {
      break;
    }
    if (anchor) break;
  }
  luaL_addlstring(&b, src, static_cast<size_t>(ms.src_end - src));
  luaL_pushresult(&b);
  lua_pushinteger(L, n);
  return 2;
}

// string.rep with the result sized up front: one allocation the Lua allocator can refuse
// ("not enough memory") instead of a byte-at-a-time loop that grows without bound.
int StrRep(lua_State* L) {
  size_t l = 0;
  const char* s = luaL_checklstring(L, 1, &l);
  // Lua 5.1 reads the count as a C int: 2^32 + 3 repeats three times.
  int n = static_cast<int>(luaL_checkinteger(L, 2));
  if (n <= 0 || l == 0) {
    lua_pushliteral(L, "");
    return 1;
  }
  size_t count = static_cast<size_t>(n);
  if (l > (static_cast<size_t>(-1) >> 2) / count) return luaL_error(L, "not enough memory");
  size_t total = l * count;
  // Built in a userdata (collected if anything below raises), then copied into the string.
  char* out = static_cast<char*>(lua_newuserdata(L, total));
  std::memcpy(out, s, l);
  for (size_t filled = l; filled < total;) {
    size_t chunk = filled < total - filled ? filled : total - filled;
    std::memcpy(out + filled, out, chunk);
    filled += chunk;
  }
  lua_pushlstring(L, out, total);
  return 1;
}

}  // namespace

void InstallStringFunctions(lua_State* L, LuaEngine* engine) {
  const struct {
    const char* name;
    lua_CFunction fn;
  } kFunctions[] = {{"find", StrFind},    {"match", StrMatch}, {"gmatch", StrGmatch},
                    {"gfind", StrGmatch}, {"gsub", StrGsub},   {"rep", StrRep}};
  lua_getglobal(L, LUA_STRLIBNAME);
  for (const auto& f : kFunctions) {
    lua_pushstring(L, f.name);
    lua_pushlightuserdata(L, engine);
    lua_pushcclosure(L, f.fn, 1);
    lua_rawset(L, -3);
  }
  lua_pop(L, 1);
}

}  // namespace vireo
