// Geo commands: GEOADD, GEODIST, GEOHASH, GEOPOS, GEORADIUS(_RO), GEORADIUSBYMEMBER(_RO),
// GEOSEARCH, GEOSEARCHSTORE. A geo set is a sorted set whose scores are 52-bit geohashes
// (types/geohash.h); everything here is argument parsing, sorted-set range scans and Redis's
// reply shapes.
//
// GEOADD is logged as the ZADD it amounts to (scores instead of coordinates), as Redis does.
// Searches follow Redis's scan order exactly (centre cell, then N, S, E, W, NE, NW, SE, SW), so
// unsorted replies and COUNT ... ANY pick the same members in the same order.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "commands/families.h"
#include "commands/zset_common.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "server/blocking_service.h"
#include "server/client.h"
#include "server/command_context.h"
#include "types/geohash.h"
#include "util/strings.h"

namespace vireo {

namespace {

// Reads "longitude latitude": floats, then a pair inside the geohash range.
void ReadLonLat(ArgParser& args, double xy[2]) {
  xy[0] = args.Double();
  xy[1] = args.Double();
  if (args.ok() && (xy[0] < geo::kLonMin || xy[0] > geo::kLonMax || xy[1] < geo::kLatMin ||
                    xy[1] > geo::kLatMax)) {
    args.Fail(fmt::format("ERR invalid longitude,latitude pair {:f},{:f}", xy[0], xy[1]));
  }
}

// Reads a unit: meters per unit.
double ReadUnit(ArgParser& args) {
  static constexpr double kMeters[] = {1, 1000, 0.3048, 1609.34};
  int unit = args.Keyword({"M", "KM", "FT", "MI"},
                          "ERR unsupported unit provided. please use M, KM, FT, MI");
  return unit < 0 ? 1 : kMeters[unit];
}

// Reads "<radius> <unit>".
void ReadRadius(ArgParser& args, geo::Shape* shape) {
  shape->radius = args.DoubleAtLeast(0, "ERR need numeric radius", "ERR radius cannot be negative");
  shape->conversion = ReadUnit(args);
}

// Reads "<width> <height> <unit>"; the sign is checked once both are numbers, as Redis does.
void ReadBox(ArgParser& args, geo::Shape* shape) {
  shape->width = args.Double("ERR need numeric width");
  shape->height = args.Double("ERR need numeric height");
  if (args.ok() && (shape->height < 0 || shape->width < 0)) {
    args.Fail("ERR height or width cannot be negative");
  }
  shape->conversion = ReadUnit(args);
}

void ReplyDistance(CommandContext& ctx, double d) {
  char buf[32];
  ctx.reply.Bulk(std::string_view(buf, geo::FormatDistance(d, buf)));
}

// A coordinate: a bulk string in RESP2, a RESP3 double printed the same way.
void ReplyCoordinate(CommandContext& ctx, double v) {
  char buf[64];
  std::string_view text(buf, geo::FormatCoordinate(v, buf));
  if (!ctx.reply.resp3()) {
    ctx.reply.Bulk(text);
    return;
  }
  ctx.reply.Raw(",");
  ctx.reply.Raw(text);
  ctx.reply.Raw("\r\n");
}

// The geo set at `key` for a reading command: like LookupZset, but counted in INFO's
// keyspace_hits / keyspace_misses as Redis's lookupKeyRead does.
ZSet* LookupGeoRead(CommandContext& ctx, std::string_view key, bool* wrong_type) {
  *wrong_type = false;
  DbEntry* entry = LookupRead(ctx, key);
  if (entry == nullptr) return nullptr;
  if (entry->value.type() != ValueType::kZSet) {
    *wrong_type = true;
    ctx.reply.Error(errors::kWrongType);
    return nullptr;
  }
  return ZsetOf(entry);
}

// The position of `member`, false when it is not in the set.
bool MemberPosition(const ZSet& z, std::string_view member, double xy[2]) {
  double score;
  return z.Score(member, &score) && geo::DecodeScore(score, xy);
}

// ---------------------------------------------------------------------------------------------
// GEOADD

void GeoaddCommand(CommandContext& ctx) {
  ArgParser args(ctx, 2);
  bool nx = false, xx = false, ch = false;
  while (true) {
    if (args.Flag("NX")) {
      nx = true;
    } else if (args.Flag("XX")) {
      xx = true;
    } else if (args.Flag("CH")) {
      ch = true;
    } else {
      break;
    }
  }
  const size_t first = args.pos();
  args.ExpectGroupsOf(3);
  args.Exclusive({nx, xx});
  struct Item {
    uint64_t score;
    std::string_view member;
  };
  std::vector<Item> items;
  items.reserve(args.remaining() / 3);
  size_t max_len = 0;
  while (args.HasNext()) {
    double xy[2];
    ReadLonLat(args, xy);
    std::string_view member = args.Next();
    items.push_back({geo::ScoreOf(xy[0], xy[1]), member});
    max_len = std::max(max_len, member.size());
  }
  if (!args.Check()) return;

  std::string_view key = ctx.arg(1);
  auto [z, wrong_type] = LookupZset(ctx, key);
  if (wrong_type) return;
  bool existed = z != nullptr;
  if (z == nullptr) {
    if (xx) {
      ctx.reply.Integer(0);
      return;
    }
    z = CreateZset(ctx, key, items.size(), max_len);
  }
  ZSet::Limits limits = ZsetLimits(ctx);
  int64_t added = 0, updated = 0;
  for (const Item& item : items) {
    auto score = static_cast<double>(item.score);
    double current;
    if (z->Score(item.member, &current)) {
      if (nx || current == score) continue;
      z->Update(item.member, score);
      ++updated;
    } else if (!xx) {
      z->Insert(item.member, score, limits);
      ++added;
    }
  }
  if (added + updated > 0) {
    KeyWritten(ctx, key, static_cast<uint64_t>(added + updated));
    Notify(ctx, kNotifyZset, "zadd", key);
    if (existed && added > 0) ctx.blocking().SignalKeyAsReady(ctx.db.index(), key);
    // Logged as the ZADD Redis rewrites GEOADD into: the options as given, then score/member.
    std::vector<std::string> zadd{"zadd", std::string(key)};
    for (size_t i = 2; i < first; ++i) zadd.emplace_back(ctx.arg(i));
    for (const Item& item : items) {
      zadd.push_back(std::to_string(item.score));
      zadd.emplace_back(item.member);
    }
    ctx.PropagateInstead(std::move(zadd));
  }
  ctx.reply.Integer(ch ? added + updated : added);
}

// ---------------------------------------------------------------------------------------------
// GEODIST, GEOHASH, GEOPOS

void GeodistCommand(CommandContext& ctx) {
  ArgParser args(ctx, 4);
  args.ExpectRemaining(0, 1);
  const double to_meters = args.HasNext() ? ReadUnit(args) : 1;
  if (!args.Check()) return;
  bool wrong_type;
  ZSet* z = LookupGeoRead(ctx, ctx.arg(1), &wrong_type);
  if (wrong_type) return;
  double a[2], b[2];
  if (z == nullptr || !MemberPosition(*z, ctx.arg(2), a) || !MemberPosition(*z, ctx.arg(3), b)) {
    ctx.reply.Null();
    return;
  }
  ReplyDistance(ctx, geo::Distance(a[0], a[1], b[0], b[1]) / to_meters);
}

void GeohashCommand(CommandContext& ctx) {
  bool wrong_type;
  ZSet* z = LookupGeoRead(ctx, ctx.arg(1), &wrong_type);
  if (wrong_type) return;
  ctx.reply.Array(ctx.argc() - 2);
  for (size_t i = 2; i < ctx.argc(); ++i) {
    double score;
    char buf[11];
    if (z != nullptr && z->Score(ctx.arg(i), &score) && geo::GeohashString(score, buf)) {
      ctx.reply.Bulk(std::string_view(buf, sizeof(buf)));
    } else {
      ctx.reply.Null();
    }
  }
}

void GeoposCommand(CommandContext& ctx) {
  bool wrong_type;
  ZSet* z = LookupGeoRead(ctx, ctx.arg(1), &wrong_type);
  if (wrong_type) return;
  ctx.reply.Array(ctx.argc() - 2);
  for (size_t i = 2; i < ctx.argc(); ++i) {
    double xy[2];
    if (z != nullptr && MemberPosition(*z, ctx.arg(i), xy)) {
      ctx.reply.Array(2);
      ReplyCoordinate(ctx, xy[0]);
      ReplyCoordinate(ctx, xy[1]);
    } else {
      ctx.reply.NullArray();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Searches

enum SearchFlags : uint32_t {
  kFromCoords = 1 << 0,  // GEORADIUS: centre from argv[2..3], radius at argv[4..5]
  kFromMember = 1 << 1,  // GEORADIUSBYMEMBER: centre from member argv[2], radius at argv[3..4]
  kNoStore = 1 << 2,     // the _RO variants
  kSearch = 1 << 3,      // GEOSEARCH syntax (FROM... / BY...)
  kSearchStore = 1 << 4  // GEOSEARCHSTORE: destination at argv[1], STOREDIST without a key
};

enum class Sort : uint8_t { kNone, kAsc, kDesc };

struct SearchArgs {
  geo::Shape shape;
  std::string_view store_key;
  bool has_store = false;
  bool store_dist = false;
  bool with_dist = false, with_hash = false, with_coord = false;
  bool from_member = false, from_lonlat = false, by_radius = false, by_box = false;
  bool any = false;
  Sort sort = Sort::kNone;
  int64_t count = 0;  // 0 = unlimited
};

struct GeoPoint {
  std::string member;
  double lon, lat, dist, score;
};

// Reads the options in Redis's order; the first error Redis would reply is the one recorded.
bool ParseSearchOptions(CommandContext& ctx, uint32_t flags, ArgParser& args, const ZSet* z,
                        SearchArgs* a) {
  const bool search = (flags & kSearch) != 0;
  const bool may_store = !(flags & kNoStore) && !search;
  while (args.HasNext()) {
    if (args.Flag("WITHDIST")) {
      a->with_dist = true;
    } else if (args.Flag("WITHHASH")) {
      a->with_hash = true;
    } else if (args.Flag("WITHCOORD")) {
      a->with_coord = true;
    } else if (args.Flag("ANY")) {
      a->any = true;
    } else if (args.Flag("ASC")) {
      a->sort = Sort::kAsc;
    } else if (args.Flag("DESC")) {
      a->sort = Sort::kDesc;
    } else if (args.OptionName("COUNT")) {
      a->count = args.IntAtLeast(1, "ERR COUNT must be > 0");
    } else if (may_store && args.OptionName("STORE")) {
      a->has_store = true;
      a->store_key = args.Next();
      a->store_dist = false;
    } else if (may_store && args.OptionName("STOREDIST")) {
      a->has_store = true;
      a->store_key = args.Next();
      a->store_dist = true;
    } else if (search && (flags & kSearchStore) && args.Flag("STOREDIST")) {
      a->store_dist = true;
    } else if (search && !a->from_lonlat && args.OptionName("FROMMEMBER")) {
      std::string_view member = args.Next();
      // Without the source key the member can't be checked; the reply is empty anyway.
      double xy[2];
      if (z != nullptr && !MemberPosition(*z, member, xy)) {
        args.Fail("ERR could not decode requested zset member");
      } else if (z != nullptr) {
        a->shape.lon = xy[0];
        a->shape.lat = xy[1];
      }
      a->from_member = true;
    } else if (search && !a->from_member && args.OptionName("FROMLONLAT", 2)) {
      double xy[2];
      ReadLonLat(args, xy);
      a->shape.lon = xy[0];
      a->shape.lat = xy[1];
      a->from_lonlat = true;
    } else if (search && !a->by_box && args.OptionName("BYRADIUS", 2)) {
      ReadRadius(args, &a->shape);
      a->shape.type = geo::Shape::Type::kCircle;
      a->by_radius = true;
    } else if (search && !a->by_radius && args.OptionName("BYBOX", 3)) {
      ReadBox(args, &a->shape);
      a->shape.type = geo::Shape::Type::kBox;
      a->by_box = true;
    } else {
      args.SyntaxError();
    }
  }
  if (!args.ok()) return args.Check();
  if (a->has_store && (a->with_dist || a->with_hash || a->with_coord)) {
    args.Fail(fmt::format("ERR {} is not compatible with WITHDIST, WITHHASH and WITHCOORD options",
                          (flags & kSearchStore) ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS"));
  } else if (search && !(a->from_member || a->from_lonlat)) {
    args.Fail(fmt::format("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for {}",
                          ctx.arg(0)));
  } else if (search && !(a->by_radius || a->by_box)) {
    args.Fail(
        fmt::format("ERR exactly one of BYRADIUS and BYBOX can be specified for {}", ctx.arg(0)));
  } else if (a->any && a->count == 0) {
    args.Fail("ERR the ANY argument requires COUNT argument");
  }
  return args.Check();
}

// Appends the members of one cell that lie inside the shape, stopping at `limit` (0 = none).
void PointsInCell(const ZSet& z, geo::HashBits cell, const geo::Shape& shape,
                  const geo::DistanceFrom& centre, size_t limit, std::vector<GeoPoint>* out) {
  uint64_t min, max;
  geo::ScoreRangeOf(cell, &min, &max);
  auto max_score = static_cast<double>(max);
  for (ZSet::Iter it = z.At(z.ScoreLowerBound(static_cast<double>(min), false));
       it.Valid() && it.score() < max_score; it.Next()) {
    double xy[2], dist = 0;
    if (geo::WithinShape(shape, centre, it.score(), xy, &dist)) {
      out->push_back({std::string(it.member()), xy[0], xy[1], dist, it.score()});
    }
    if (limit != 0 && out->size() >= limit) break;
  }
}

// The members inside the shape, in Redis's scan order.
std::vector<GeoPoint> PointsInShape(const ZSet& z, const geo::Shape& shape, size_t limit) {
  geo::SearchCells cells = geo::CellsForShape(shape);
  std::vector<GeoPoint> out;
  geo::DistanceFrom centre(shape.lon, shape.lat);
  // Huge radii can make neighbours coincide: a cell equal to the last one scanned is skipped.
  // (Redis's bookkeeping can't tell "the centre cell was last" from "nothing yet", so the
  // first neighbour is never compared; neither is it here.)
  size_t last = 0;
  for (size_t i = 0; i < cells.cells.size(); ++i) {
    const geo::HashBits& cell = cells.cells[i];
    if (cell.IsZero()) continue;
    if (last != 0 && cell == cells.cells[last]) continue;
    if (limit != 0 && out.size() >= limit) break;
    PointsInCell(z, cell, shape, centre, limit, &out);
    last = i;
  }
  return out;
}

// Replaces `dst` with the results (or deletes it when there are none); replies the count.
// Redis counts one change per stored member.
void StoreResults(CommandContext& ctx, uint32_t flags, const SearchArgs& a,
                  std::vector<GeoPoint>& points, size_t n) {
  std::vector<std::pair<std::string, double>> items;
  items.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    GeoPoint& p = points[i];
    items.emplace_back(std::move(p.member), a.store_dist ? p.dist / a.shape.conversion : p.score);
  }
  StoreZsetResult(ctx, a.store_key, (flags & kSearch) ? "geosearchstore" : "georadiusstore", items,
                  n);
}

void ReplyResults(CommandContext& ctx, const SearchArgs& a, const std::vector<GeoPoint>& points,
                  size_t n) {
  size_t options = a.with_dist + a.with_hash + a.with_coord;
  ctx.reply.Array(n);
  for (size_t i = 0; i < n; ++i) {
    const GeoPoint& p = points[i];
    if (options != 0) ctx.reply.Array(options + 1);
    ctx.reply.Bulk(p.member);
    if (a.with_dist) ReplyDistance(ctx, p.dist / a.shape.conversion);
    if (a.with_hash) ctx.reply.Integer(static_cast<int64_t>(p.score));
    if (a.with_coord) {
      ctx.reply.Array(2);
      ReplyCoordinate(ctx, p.lon);
      ReplyCoordinate(ctx, p.lat);
    }
  }
}

void SearchGeneric(CommandContext& ctx, size_t src_index, uint32_t flags) {
  bool wrong_type;
  ZSet* z = LookupGeoRead(ctx, ctx.arg(src_index), &wrong_type);
  if (wrong_type) return;
  SearchArgs a;
  ArgParser args(ctx, 2);
  if (flags & kFromCoords) {
    double xy[2];
    ReadLonLat(args, xy);
    a.shape.lon = xy[0];
    a.shape.lat = xy[1];
    ReadRadius(args, &a.shape);
  } else if (flags & kFromMember) {
    // Without the key Redis parses only the options (to pick the reply) and answers empty.
    double xy[2];
    if (z != nullptr && !MemberPosition(*z, args.Next(), xy)) {
      args.Fail("ERR could not decode requested zset member");
    } else if (z != nullptr) {
      a.shape.lon = xy[0];
      a.shape.lat = xy[1];
      ReadRadius(args, &a.shape);
    }
    args.Seek(5);
  } else if (flags & kSearchStore) {
    a.has_store = true;
    a.store_key = ctx.arg(1);
    args.Seek(3);
  }
  if (!ParseSearchOptions(ctx, flags, args, z, &a)) return;

  if (z == nullptr) {
    if (a.has_store) {
      if (ctx.db.Delete(a.store_key)) {
        KeyWritten(ctx, a.store_key);
        Notify(ctx, kNotifyGeneric, "del", a.store_key);
      }
      ctx.reply.Integer(0);
    } else {
      ctx.reply.EmptyArray();
    }
    return;
  }
  // COUNT without ANY means "the nearest N": sorting is implied.
  if (a.count != 0 && a.sort == Sort::kNone && !a.any) a.sort = Sort::kAsc;

  std::vector<GeoPoint> points =
      PointsInShape(*z, a.shape, a.any ? static_cast<size_t>(a.count) : 0);
  if (points.empty() && !a.has_store) {
    ctx.reply.EmptyArray();
    return;
  }
  size_t n = points.size();
  if (a.count != 0 && static_cast<uint64_t>(a.count) < n) n = static_cast<size_t>(a.count);
  if (a.sort == Sort::kAsc) {
    std::stable_sort(points.begin(), points.end(),
                     [](const GeoPoint& x, const GeoPoint& y) { return x.dist < y.dist; });
  } else if (a.sort == Sort::kDesc) {
    std::stable_sort(points.begin(), points.end(),
                     [](const GeoPoint& x, const GeoPoint& y) { return x.dist > y.dist; });
  }
  if (a.has_store) {
    StoreResults(ctx, flags, a, points, n);
  } else {
    ReplyResults(ctx, a, points, n);
  }
}

void GeoradiusCommand(CommandContext& ctx) { SearchGeneric(ctx, 1, kFromCoords); }
void GeoradiusRoCommand(CommandContext& ctx) { SearchGeneric(ctx, 1, kFromCoords | kNoStore); }
void GeoradiusbymemberCommand(CommandContext& ctx) { SearchGeneric(ctx, 1, kFromMember); }
void GeoradiusbymemberRoCommand(CommandContext& ctx) {
  SearchGeneric(ctx, 1, kFromMember | kNoStore);
}
void GeosearchCommand(CommandContext& ctx) { SearchGeneric(ctx, 1, kSearch); }
void GeosearchstoreCommand(CommandContext& ctx) { SearchGeneric(ctx, 2, kSearch | kSearchStore); }

}  // namespace

void RegisterGeoCommands(CommandTable& table) {
  constexpr const char* kGroup = "geo";
  constexpr uint64_t kWD = kCmdWrite | kCmdDenyOom;
  constexpr const char* kSearchComplexity =
      "O(N+log(M)) where N is the number of elements inside the bounding box of the circular "
      "area delimited by center and radius and M is the number of items inside the index.";
  const auto source = KeyAt(1, kKeyRO | kKeyAccess);
  // GEORADIUS(BYMEMBER)'s STORE / STOREDIST destinations, searched from the first option.
  auto stores = [&](int options_from) {
    return Keys(source, KeysAfter("STORE", options_from, 0, 1, 0, kKeyOW | kKeyUpdate),
                KeysAfter("STOREDIST", options_from, 0, 1, 0, kKeyOW | kKeyUpdate));
  };

  table.Add({"geoadd", -5, kWD, Keys(KeyAt(1, kKeyRW | kKeyUpdate)), kAclGeo, kGroup, "3.2.0",
             "Adds one or more members to a geospatial index. The key is created if it doesn't "
             "exist.",
             "key [NX | XX] [change=CH] data=<longitude latitude member> ...", GeoaddCommand,
             "O(log(N)) for each item added, where N is the number of elements in the sorted "
             "set."});
  table.Add({"geodist", -4, kCmdReadonly, Keys(source), kAclGeo, kGroup, "3.2.0",
             "Returns the distance between two members of a geospatial index.",
             "key member1 member2 [unit=<'m' | 'km' | 'ft' | 'mi'>]", GeodistCommand, "O(1)"});
  table.Add({"geohash", -2, kCmdReadonly, Keys(source), kAclGeo, kGroup, "3.2.0",
             "Returns members from a geospatial index as geohash strings.", "key [member ...]",
             GeohashCommand, "O(1) for each member requested."});
  table.Add({"geopos", -2, kCmdReadonly, Keys(source), kAclGeo, kGroup, "3.2.0",
             "Returns the longitude and latitude of members from a geospatial index.",
             "key [member ...]", GeoposCommand, "O(1) for each member requested."});
  table.Add({"georadius", -6, kWD, stores(6), kAclGeo, kGroup, "3.2.0",
             "Queries a geospatial index for members within a distance from a coordinate, "
             "optionally stores the result.",
             "key longitude latitude radius unit=<'m' | 'km' | 'ft' | 'mi'> "
             "[WITHCOORD] [WITHDIST] [WITHHASH] [count-block=<<COUNT count> [ANY]>] "
             "[order=<ASC | DESC>] [store=<STORE storekey=key | STOREDIST "
             "storedistkey=key>]",
             GeoradiusCommand, kSearchComplexity});
  table.Add({"georadius_ro", -6, kCmdReadonly, Keys(source), kAclGeo, kGroup, "3.2.10",
             "Returns members from a geospatial index that are within a distance from a "
             "coordinate.",
             "key longitude latitude radius unit=<'m' | 'km' | 'ft' | 'mi'> "
             "[WITHCOORD] [WITHDIST] [WITHHASH] [count-block=<<COUNT count> [ANY]>] "
             "[order=<ASC | DESC>]",
             GeoradiusRoCommand, kSearchComplexity});
  table.Add({"georadiusbymember", -5, kWD, stores(5), kAclGeo, kGroup, "3.2.0",
             "Queries a geospatial index for members within a distance from a member, optionally "
             "stores the result.",
             "key member radius unit=<'m' | 'km' | 'ft' | 'mi'> [WITHCOORD] [WITHDIST] "
             "[WITHHASH] [count-block=<<COUNT count> [ANY]>] [order=<ASC | DESC>] "
             "[store=<STORE storekey=key | STOREDIST storedistkey=key>]",
             GeoradiusbymemberCommand, kSearchComplexity});
  table.Add({"georadiusbymember_ro", -5, kCmdReadonly, Keys(source), kAclGeo, kGroup, "3.2.10",
             "Returns members from a geospatial index that are within a distance from a member.",
             "key member radius unit=<'m' | 'km' | 'ft' | 'mi'> [WITHCOORD] [WITHDIST] "
             "[WITHHASH] [count-block=<<COUNT count> [ANY]>] [order=<ASC | DESC>]",
             GeoradiusbymemberRoCommand, kSearchComplexity});
  constexpr const char* kGeosearchComplexity =
      "O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area "
      "around the shape provided as the filter and M is the number of items inside the shape";
  table.Add({"geosearch", -7, kCmdReadonly, Keys(source), kAclGeo, kGroup, "6.2.0",
             "Queries a geospatial index for members inside an area of a box or a circle.",
             "key from=<FROMMEMBER member | <FROMLONLAT longitude latitude>> "
             "by=<circle=<<BYRADIUS radius> unit=<'m' | 'km' | 'ft' | 'mi'>> | "
             "box=<<BYBOX width> height unit=<'m' | 'km' | 'ft' | 'mi'>>> [order=<ASC "
             "| DESC>] [count-block=<<COUNT count> [ANY]>] [WITHCOORD] [WITHDIST] "
             "[WITHHASH]",
             GeosearchCommand, kGeosearchComplexity});
  table.Add({"geosearchstore", -8, kWD,
             Keys(KeyAt(1, kKeyOW | kKeyUpdate), KeyAt(2, kKeyRO | kKeyAccess)), kAclGeo, kGroup,
             "6.2.0",
             "Queries a geospatial index for members inside an area of a box or a circle, "
             "optionally stores the result.",
             "destination source from=<FROMMEMBER member | <FROMLONLAT longitude "
             "latitude>> by=<circle=<<BYRADIUS radius> unit=<'m' | 'km' | 'ft' | "
             "'mi'>> | box=<<BYBOX width> height unit=<'m' | 'km' | 'ft' | 'mi'>>> "
             "[order=<ASC | DESC>] [count-block=<<COUNT count> [ANY]>] [STOREDIST]",
             GeosearchstoreCommand, kGeosearchComplexity});
}

}  // namespace vireo
