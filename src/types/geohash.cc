#include "types/geohash.h"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace vireo::geo {

namespace {

constexpr double kDegToRad = M_PI / 180.0;
// The Web-Mercator half-width in meters: the radius at which one cell covers the whole world.
constexpr double kMercatorMax = 20037726.37;
constexpr uint64_t kEvenBits = 0x5555555555555555ULL;
constexpr uint64_t kOddBits = 0xaaaaaaaaaaaaaaaaULL;

double DegToRad(double deg) { return deg * kDegToRad; }
double RadToDeg(double rad) { return rad / kDegToRad; }

// Spreads the low 32 bits of v over the even bit positions of the result.
uint64_t Spread(uint32_t v) {
  uint64_t x = v;
  x = (x | (x << 16)) & 0x0000FFFF0000FFFFULL;
  x = (x | (x << 8)) & 0x00FF00FF00FF00FFULL;
  x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0FULL;
  x = (x | (x << 2)) & 0x3333333333333333ULL;
  x = (x | (x << 1)) & kEvenBits;
  return x;
}

// Gathers the even bits of v into the low 32 bits of the result.
uint64_t Gather(uint64_t v) {
  uint64_t x = v & kEvenBits;
  x = (x | (x >> 1)) & 0x3333333333333333ULL;
  x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
  x = (x | (x >> 4)) & 0x00FF00FF00FF00FFULL;
  x = (x | (x >> 8)) & 0x0000FFFF0000FFFFULL;
  x = (x | (x >> 16)) & 0x00000000FFFFFFFFULL;
  return x;
}

bool RangeIsZero(Range r) { return r.min == 0 && r.max == 0; }

// Redis turns a score into hash bits with a C cast from double to uint64_t; x86-64 compilers
// emit a truncating conversion whose results outside [0, 2^64) are fixed by the instruction set.
// Reproduced without undefined behaviour, so odd scores (negative, huge) decode the same way.
uint64_t ScoreBits(double s) {
  constexpr double kTwo63 = 9223372036854775808.0;
  if (s < kTwo63) {
    if (s >= -kTwo63) return static_cast<uint64_t>(static_cast<int64_t>(s));
    return 1ULL << 63;
  }
  double t = s - kTwo63;
  if (t < kTwo63) return static_cast<uint64_t>(static_cast<int64_t>(t)) ^ (1ULL << 63);
  return 0;  // the "indefinite" integer xor the sign bit (also NaN)
}

// Adds d (+1/-1/0) to the coordinate stored in the bits selected by `lane` (the other lane is
// kept). Filling the other lane with ones lets the carry or borrow ripple across it.
uint64_t MoveLane(uint64_t bits, uint8_t step, uint64_t lane, int d) {
  if (d == 0) return bits;
  uint64_t mine = bits & lane;
  uint64_t other = bits & ~lane;
  uint64_t filler = ~lane >> (64 - step * 2);
  if (d > 0) {
    mine = mine + (filler + 1);
  } else {
    mine = (mine | filler) - (filler + 1);
  }
  mine &= lane >> (64 - step * 2);
  return mine | other;
}

// Longitude sits in the odd bits, latitude in the even bits.
HashBits Moved(HashBits h, int dlon, int dlat) {
  h.bits = MoveLane(h.bits, h.step, kOddBits, dlon);
  h.bits = MoveLane(h.bits, h.step, kEvenBits, dlat);
  return h;
}

}  // namespace

uint64_t Interleave(uint32_t x, uint32_t y) { return Spread(x) | (Spread(y) << 1); }

uint64_t Deinterleave(uint64_t v) { return Gather(v) | (Gather(v >> 1) << 32); }

bool Encode(Range lon_range, Range lat_range, double lon, double lat, int step, HashBits* out) {
  if (step > 32 || step == 0 || RangeIsZero(lat_range) || RangeIsZero(lon_range)) return false;
  if (lon > kLonMax || lon < kLonMin || lat > kLatMax || lat < kLatMin) return false;
  out->bits = 0;
  out->step = static_cast<uint8_t>(step);
  if (lat < lat_range.min || lat > lat_range.max || lon < lon_range.min || lon > lon_range.max) {
    return false;
  }
  double lat_offset = (lat - lat_range.min) / (lat_range.max - lat_range.min);
  double lon_offset = (lon - lon_range.min) / (lon_range.max - lon_range.min);
  lat_offset *= static_cast<double>(1ULL << step);
  lon_offset *= static_cast<double>(1ULL << step);
  out->bits = Interleave(static_cast<uint32_t>(lat_offset), static_cast<uint32_t>(lon_offset));
  return true;
}

bool EncodeWGS84(double lon, double lat, int step, HashBits* out) {
  return Encode({kLonMin, kLonMax}, {kLatMin, kLatMax}, lon, lat, step, out);
}

bool Decode(Range lon_range, Range lat_range, HashBits hash, Area* out) {
  if (hash.IsZero() || RangeIsZero(lat_range) || RangeIsZero(lon_range)) return false;
  out->hash = hash;
  uint64_t separated = Deinterleave(hash.bits);
  double lat_scale = lat_range.max - lat_range.min;
  double lon_scale = lon_range.max - lon_range.min;
  auto ilat = static_cast<uint32_t>(separated);
  auto ilon = static_cast<uint32_t>(separated >> 32);
  // The +1 wraps in 32 bits, as Redis's unsigned arithmetic does.
  uint32_t ilat1 = ilat + 1, ilon1 = ilon + 1;
  auto cells = static_cast<double>(1ULL << hash.step);
  out->lat.min = lat_range.min + (ilat * 1.0 / cells) * lat_scale;
  out->lat.max = lat_range.min + (ilat1 * 1.0 / cells) * lat_scale;
  out->lon.min = lon_range.min + (ilon * 1.0 / cells) * lon_scale;
  out->lon.max = lon_range.min + (ilon1 * 1.0 / cells) * lon_scale;
  return true;
}

bool DecodeWGS84(HashBits hash, Area* out) {
  return Decode({kLonMin, kLonMax}, {kLatMin, kLatMax}, hash, out);
}

uint64_t Align52(HashBits hash) { return hash.bits << (52 - hash.step * 2); }

uint64_t ScoreOf(double lon, double lat) {
  HashBits h;
  EncodeWGS84(lon, lat, kStepMax, &h);
  return Align52(h);
}

bool DecodeScore(double score, double xy[2]) {
  Area area;
  if (!DecodeWGS84(HashBits{ScoreBits(score), kStepMax}, &area)) return false;
  xy[0] = (area.lon.min + area.lon.max) / 2;
  if (xy[0] > kLonMax) xy[0] = kLonMax;
  if (xy[0] < kLonMin) xy[0] = kLonMin;
  xy[1] = (area.lat.min + area.lat.max) / 2;
  if (xy[1] > kLatMax) xy[1] = kLatMax;
  if (xy[1] < kLatMin) xy[1] = kLatMin;
  return true;
}

bool GeohashString(double score, char out[11]) {
  static constexpr char kAlphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
  double xy[2];
  if (!DecodeScore(score, xy)) return false;
  HashBits h;
  Encode({-180, 180}, {-90, 90}, xy[0], xy[1], kStepMax, &h);
  // 52 bits make 10 full characters; the 11th (kept for compatibility) is always '0'.
  for (int i = 0; i < 10; ++i) out[i] = kAlphabet[(h.bits >> (52 - (i + 1) * 5)) & 0x1f];
  out[10] = kAlphabet[0];
  return true;
}

Neighbors NeighborsOf(HashBits h) {
  Neighbors n;
  n.east = Moved(h, 1, 0);
  n.west = Moved(h, -1, 0);
  n.south = Moved(h, 0, -1);
  n.north = Moved(h, 0, 1);
  n.north_west = Moved(h, -1, 1);
  n.north_east = Moved(h, 1, 1);
  n.south_east = Moved(h, 1, -1);
  n.south_west = Moved(h, -1, -1);
  return n;
}

double LatDistance(double lat1, double lat2) {
  return kEarthRadiusMeters * std::fabs(DegToRad(lat2) - DegToRad(lat1));
}

double Distance(double lon1, double lat1, double lon2, double lat2) {
  return DistanceFrom(lon1, lat1).To(lon2, lat2);
}

int EstimateStepsByRadius(double range_meters, double lat) {
  if (range_meters == 0) return kStepMax;
  int step = 1;
  while (range_meters < kMercatorMax) {
    range_meters *= 2;
    step++;
  }
  step -= 2;  // one step coarser, so the 3x3 cells cover the radius in most cases
  // Meridians converge towards the poles: cells get narrower, so go coarser still.
  if (lat > 66 || lat < -66) {
    step--;
    if (lat > 80 || lat < -80) step--;
  }
  if (step < 1) step = 1;
  if (step > kStepMax) step = kStepMax;
  return step;
}

std::array<double, 4> BoundingBox(const Shape& shape) {
  bool circle = shape.type == Shape::Type::kCircle;
  double height = shape.conversion * (circle ? shape.radius : shape.height / 2);
  double width = shape.conversion * (circle ? shape.radius : shape.width / 2);
  const double lat_delta = RadToDeg(height / kEarthRadiusMeters);
  const double lon_delta_top =
      RadToDeg(width / kEarthRadiusMeters / std::cos(DegToRad(shape.lat + lat_delta)));
  const double lon_delta_bottom =
      RadToDeg(width / kEarthRadiusMeters / std::cos(DegToRad(shape.lat - lat_delta)));
  // The edge nearer the pole is the wider one in degrees: north in the northern hemisphere.
  bool southern = shape.lat < 0;
  double lon_delta = southern ? lon_delta_bottom : lon_delta_top;
  return {shape.lon - lon_delta, shape.lat - lat_delta, shape.lon + lon_delta,
          shape.lat + lat_delta};
}

SearchCells CellsForShape(const Shape& shape) {
  std::array<double, 4> bounds = BoundingBox(shape);
  double min_lon = bounds[0], min_lat = bounds[1], max_lon = bounds[2], max_lat = bounds[3];
  double radius_meters = shape.type == Shape::Type::kCircle
                             ? shape.radius
                             : std::sqrt((shape.width / 2) * (shape.width / 2) +
                                         (shape.height / 2) * (shape.height / 2));
  radius_meters *= shape.conversion;
  int steps = EstimateStepsByRadius(radius_meters, shape.lat);

  HashBits hash;
  Area area;
  EncodeWGS84(shape.lon, shape.lat, steps, &hash);
  Neighbors n = NeighborsOf(hash);
  DecodeWGS84(hash, &area);

  // Near a cell edge the estimated step can leave part of the shape outside the 3x3 cells:
  // then one step coarser.
  Area north, south, east, west;
  DecodeWGS84(n.north, &north);
  DecodeWGS84(n.south, &south);
  DecodeWGS84(n.east, &east);
  DecodeWGS84(n.west, &west);
  bool decrease = north.lat.max < max_lat || south.lat.min > min_lat || east.lon.max < max_lon ||
                  west.lon.min > min_lon;
  if (steps > 1 && decrease) {
    steps--;
    EncodeWGS84(shape.lon, shape.lat, steps, &hash);
    n = NeighborsOf(hash);
    DecodeWGS84(hash, &area);
  }

  // Neighbours on a side the shape doesn't reach are skipped.
  if (steps >= 2) {
    if (area.lat.min < min_lat) n.south = n.south_west = n.south_east = HashBits{};
    if (area.lat.max > max_lat) n.north = n.north_east = n.north_west = HashBits{};
    if (area.lon.min < min_lon) n.west = n.south_west = n.north_west = HashBits{};
    if (area.lon.max > max_lon) n.east = n.south_east = n.north_east = HashBits{};
  }
  SearchCells out;
  out.cells = {hash,         n.north,      n.south,      n.east,      n.west,
               n.north_east, n.north_west, n.south_east, n.south_west};
  out.area = area;
  return out;
}

void ScoreRangeOf(HashBits cell, uint64_t* min, uint64_t* max) {
  *min = Align52(cell);
  cell.bits++;
  *max = Align52(cell);
}

DistanceFrom::DistanceFrom(double lon, double lat)
    : lat_(lat), lon_r_(DegToRad(lon)), lat_r_(DegToRad(lat)), cos_lat_(std::cos(lat_r_)) {}

double DistanceFrom::To(double lon, double lat) const {
  double lon2r = DegToRad(lon);
  double v = std::sin((lon2r - lon_r_) / 2);
  // Same meridian: the haversine reduces to the latitude difference (and skips the trig).
  if (v == 0.0) return LatDistance(lat_, lat);
  double lat2r = DegToRad(lat);
  double u = std::sin((lat2r - lat_r_) / 2);
  double a = u * u + cos_lat_ * std::cos(lat2r) * v * v;
  return 2.0 * kEarthRadiusMeters * std::asin(std::sqrt(a));
}

bool WithinShape(const Shape& shape, double score, double xy[2], double* distance) {
  return WithinShape(shape, DistanceFrom(shape.lon, shape.lat), score, xy, distance);
}

bool WithinShape(const Shape& shape, const DistanceFrom& centre, double score, double xy[2],
                 double* distance) {
  if (!DecodeScore(score, xy)) return false;
  if (shape.type == Shape::Type::kCircle) {
    *distance = centre.To(xy[0], xy[1]);
    return *distance <= shape.radius * shape.conversion;
  }
  double width_m = shape.width * shape.conversion;
  double height_m = shape.height * shape.conversion;
  // The latitude test is the cheaper one, so it goes first.
  if (LatDistance(xy[1], shape.lat) > height_m / 2) return false;
  if (Distance(xy[0], xy[1], shape.lon, xy[1]) > width_m / 2) return false;
  *distance = centre.To(xy[0], xy[1]);
  return true;
}

size_t FormatDistance(double d, char* buf) {
  if (d == 0) {
    std::memcpy(buf, "0.0000", 7);
    return 6;
  }
  long long scaled = std::llrint(d * 10000.0);
  bool negative = scaled < 0;
  unsigned long long magnitude = negative ? 0ULL - static_cast<unsigned long long>(scaled)
                                          : static_cast<unsigned long long>(scaled);
  // At least five digits, so there is an integer part before the four decimals.
  char digits[24];
  int n = std::snprintf(digits, sizeof(digits), "%05llu", magnitude);
  size_t len = 0;
  if (negative) buf[len++] = '-';
  std::memcpy(buf + len, digits, n - 4);
  len += n - 4;
  buf[len++] = '.';
  std::memcpy(buf + len, digits + n - 4, 4);
  len += 4;
  buf[len] = '\0';
  return len;
}

size_t FormatCoordinate(double v, char* buf) {
  int n = std::snprintf(buf, 64, "%.17Lf", static_cast<long double>(v));
  size_t len = static_cast<size_t>(n);
  if (std::memchr(buf, '.', len) != nullptr) {
    while (buf[len - 1] == '0') --len;
    if (buf[len - 1] == '.') --len;
  }
  if (len == 2 && buf[0] == '-' && buf[1] == '0') {
    buf[0] = '0';
    len = 1;
  }
  buf[len] = '\0';
  return len;
}

}  // namespace vireo::geo
