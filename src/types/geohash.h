// Geohash arithmetic for the GEO commands: points live in sorted sets as 52-bit scores, 26 bits
// of latitude interleaved with 26 bits of longitude, over Redis's ranges (longitude ±180,
// latitude ±85.05112878, the Web-Mercator limits). Searches cover the query shape with the
// cell that holds its centre plus the 8 neighbouring cells at a step (precision) estimated from
// the radius, then filter the candidates by exact distance.
//
// Every floating-point step mirrors Redis's order of operations, because GEOPOS, WITHDIST and
// the set of members a search returns are compared with Redis digit for digit.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace vireo::geo {

inline constexpr int kStepMax = 26;  // 26 * 2 = 52 bits: exactly representable in a double
inline constexpr double kLonMin = -180, kLonMax = 180;
inline constexpr double kLatMin = -85.05112878, kLatMax = 85.05112878;
// Earth's quadratic mean radius for WGS-84, as Redis uses it.
inline constexpr double kEarthRadiusMeters = 6372797.560856;

struct HashBits {
  uint64_t bits = 0;
  uint8_t step = 0;
  // An excluded neighbour is all zero (a real cell has step >= 1).
  bool IsZero() const { return bits == 0 && step == 0; }
  bool operator==(const HashBits&) const = default;
};

struct Range {
  double min = 0, max = 0;
};

struct Area {
  HashBits hash;
  Range lon, lat;
};

// Interleaves x into the even bits and y into the odd bits of the result (low 32 bits each).
uint64_t Interleave(uint32_t x, uint32_t y);
// The inverse: even bits in the low 32 bits of the result, odd bits in the high 32.
uint64_t Deinterleave(uint64_t v);

// Encodes a point with `step` bits per coordinate over the given ranges. False when the point
// is outside Redis's limits or the ranges, or the step is not 1..32.
bool Encode(Range lon_range, Range lat_range, double lon, double lat, int step, HashBits* out);
// Over Redis's ranges.
bool EncodeWGS84(double lon, double lat, int step, HashBits* out);
// The cell a hash names. False for the zero hash.
bool Decode(Range lon_range, Range lat_range, HashBits hash, Area* out);
bool DecodeWGS84(HashBits hash, Area* out);

// The score GEOADD stores for a point (the hash left-aligned to 52 bits).
uint64_t Align52(HashBits hash);
// The 52-bit score of a valid point.
uint64_t ScoreOf(double lon, double lat);
// The centre of the step-26 cell a score names, clamped to Redis's limits: xy[0] = longitude,
// xy[1] = latitude. False only when the score doesn't name a cell.
bool DecodeScore(double score, double xy[2]);

// GEOHASH's 11-character base32 string for a score (re-encoded over the standard ±90 latitude
// range); false when the score doesn't decode.
bool GeohashString(double score, char out[11]);

// The 8 neighbours of a cell, in Redis's order of use.
struct Neighbors {
  HashBits north, south, east, west, north_east, north_west, south_east, south_west;
};
Neighbors NeighborsOf(HashBits hash);

// Great-circle distance in meters (haversine on Redis's earth radius).
double Distance(double lon1, double lat1, double lon2, double lat2);
// The distance along a meridian between two latitudes.
double LatDistance(double lat1, double lat2);

// A search shape: a circle of `radius` or a box of `width` x `height` around (lon, lat), in a
// unit that is `conversion` meters.
struct Shape {
  enum class Type : uint8_t { kCircle, kBox };
  Type type = Type::kCircle;
  double lon = 0, lat = 0;
  double radius = 0;
  double width = 0, height = 0;
  double conversion = 1;
};

// The step Redis picks for a search of `range_meters` around latitude `lat`.
int EstimateStepsByRadius(double range_meters, double lat);
// The lon/lat bounding box of a shape: {min lon, min lat, max lon, max lat}.
std::array<double, 4> BoundingBox(const Shape& shape);

// The cells to scan for a shape: the centre cell then north, south, east, west, north-east,
// north-west, south-east, south-west; useless neighbours are zero.
struct SearchCells {
  std::array<HashBits, 9> cells;
  Area area;  // of the centre cell
};
SearchCells CellsForShape(const Shape& shape);

// The score range [*min, *max) of the members inside a cell.
void ScoreRangeOf(HashBits cell, uint64_t* min, uint64_t* max);

// Distances from one fixed point: Distance(lon, lat, ...) with the centre's radians and cosine
// computed once (the same operations on the same inputs, so the same bits).
class DistanceFrom {
 public:
  DistanceFrom(double lon, double lat);
  double To(double lon, double lat) const;

 private:
  double lat_, lon_r_, lat_r_, cos_lat_;
};

// Whether the point a score names is inside the shape; fills its coordinates and its distance
// (meters) from the shape's centre. `centre` is DistanceFrom(shape.lon, shape.lat).
bool WithinShape(const Shape& shape, const DistanceFrom& centre, double score, double xy[2],
                 double* distance);
bool WithinShape(const Shape& shape, double score, double xy[2], double* distance);

// A distance as the GEO commands print it: rounded to 4 decimals ("%.4f" on llrint(d * 1e4),
// as Redis 7.2's fixed-point formatter does). Returns the length written to buf (>= 32 bytes).
size_t FormatDistance(double d, char* buf);
// A coordinate as GEOPOS / WITHCOORD print it: the value as a long double with 17 decimals,
// trailing zeros (and a bare '.') removed, "-0" as "0". buf must hold 64 bytes.
size_t FormatCoordinate(double v, char* buf);

}  // namespace vireo::geo
