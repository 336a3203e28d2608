#include "types/geohash.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace vireo::geo {
namespace {

std::string Dist(double d) {
  char buf[32];
  return std::string(buf, FormatDistance(d, buf));
}

std::string Coord(double v) {
  char buf[64];
  return std::string(buf, FormatCoordinate(v, buf));
}

TEST(Geohash, InterleaveRoundTrips) {
  std::mt19937_64 rng(1);
  for (int i = 0; i < 10000; ++i) {
    auto x = static_cast<uint32_t>(rng()), y = static_cast<uint32_t>(rng());
    uint64_t v = Interleave(x, y);
    uint64_t back = Deinterleave(v);
    EXPECT_EQ(static_cast<uint32_t>(back), x);
    EXPECT_EQ(static_cast<uint32_t>(back >> 32), y);
  }
  EXPECT_EQ(Interleave(1, 0), 1u);
  EXPECT_EQ(Interleave(0, 1), 2u);
  EXPECT_EQ(Interleave(0xffffffff, 0), 0x5555555555555555ULL);
}

TEST(Geohash, ScoresOfKnownPoints) {
  // Values GEOADD stores in Redis.
  EXPECT_EQ(ScoreOf(13.361389, 38.115556), 3479099956230698ULL);
  EXPECT_EQ(ScoreOf(15.087269, 37.502669), 3479447370796909ULL);
  EXPECT_EQ(ScoreOf(kLonMin, kLatMin), 0u);
}

TEST(Geohash, EncodeRejectsOutOfRange) {
  HashBits h;
  EXPECT_FALSE(EncodeWGS84(180.0001, 0, kStepMax, &h));
  EXPECT_FALSE(EncodeWGS84(0, 85.06, kStepMax, &h));
  EXPECT_FALSE(EncodeWGS84(0, 0, 0, &h));
  EXPECT_FALSE(EncodeWGS84(0, 0, 33, &h));
  EXPECT_TRUE(EncodeWGS84(180, kLatMax, kStepMax, &h));
}

TEST(Geohash, DecodeGivesTheCellCentre) {
  double xy[2];
  ASSERT_TRUE(DecodeScore(3479099956230698.0, xy));
  EXPECT_EQ(Coord(xy[0]), "13.36138933897018433");
  EXPECT_EQ(Coord(xy[1]), "38.11555639549629859");
  // The corners clamp to the limits.
  ASSERT_TRUE(DecodeScore(static_cast<double>(ScoreOf(180, kLatMax)), xy));
  EXPECT_EQ(Coord(xy[0]), "180");
  EXPECT_EQ(Coord(xy[1]), "85.0511287799999991");
}

TEST(Geohash, DecodeIsWithinHalfACell) {
  std::mt19937_64 rng(2);
  std::uniform_real_distribution<double> lon(kLonMin, kLonMax), lat(kLatMin, kLatMax);
  for (int i = 0; i < 10000; ++i) {
    double x = lon(rng), y = lat(rng), xy[2];
    ASSERT_TRUE(DecodeScore(static_cast<double>(ScoreOf(x, y)), xy));
    EXPECT_NEAR(xy[0], x, 360.0 / (1 << 26));
    EXPECT_NEAR(xy[1], y, 170.2 / (1 << 26));
    // Re-encoding the centre names the same cell.
    EXPECT_EQ(ScoreOf(xy[0], xy[1]), ScoreOf(x, y));
  }
}

TEST(Geohash, GeohashStrings) {
  char buf[11];
  ASSERT_TRUE(GeohashString(3479099956230698.0, buf));
  EXPECT_EQ(std::string(buf, 11), "sqc8b49rny0");
  ASSERT_TRUE(GeohashString(3479447370796909.0, buf));
  EXPECT_EQ(std::string(buf, 11), "sqdtr74hyu0");
}

TEST(Geohash, NeighboursStepOneCell) {
  HashBits h;
  ASSERT_TRUE(EncodeWGS84(13.36, 38.11, 10, &h));
  Neighbors n = NeighborsOf(h);
  Area c, e, w, no, s;
  ASSERT_TRUE(DecodeWGS84(h, &c));
  ASSERT_TRUE(DecodeWGS84(n.east, &e));
  ASSERT_TRUE(DecodeWGS84(n.west, &w));
  ASSERT_TRUE(DecodeWGS84(n.north, &no));
  ASSERT_TRUE(DecodeWGS84(n.south, &s));
  EXPECT_DOUBLE_EQ(e.lon.min, c.lon.max);
  EXPECT_DOUBLE_EQ(w.lon.max, c.lon.min);
  EXPECT_DOUBLE_EQ(no.lat.min, c.lat.max);
  EXPECT_DOUBLE_EQ(s.lat.max, c.lat.min);
  EXPECT_DOUBLE_EQ(e.lat.min, c.lat.min);
  EXPECT_EQ(NeighborsOf(n.east).west, h);
  EXPECT_EQ(NeighborsOf(n.north_east).south_west, h);
  // The grid wraps around the antimeridian.
  HashBits edge;
  ASSERT_TRUE(EncodeWGS84(179.99, 0, 10, &edge));
  Area wrapped;
  ASSERT_TRUE(DecodeWGS84(NeighborsOf(edge).east, &wrapped));
  EXPECT_DOUBLE_EQ(wrapped.lon.min, -180);
}

TEST(Geohash, ScoreRangeOfACell) {
  HashBits h{0b101010, 3};
  uint64_t min, max;
  ScoreRangeOf(h, &min, &max);
  EXPECT_EQ(min, 0b101010ULL << 46);
  EXPECT_EQ(max, 0b101011ULL << 46);
}

TEST(Geohash, Distances) {
  double d = Distance(13.36138933897018433, 38.11555639549629859, 15.08726745843887329,
                      37.50266842333162032);
  EXPECT_EQ(Dist(d), "166274.1516");
  EXPECT_EQ(Distance(10, 20, 10, 20), 0);
  // Same meridian: the latitude shortcut.
  EXPECT_DOUBLE_EQ(Distance(5, 0, 5, 1), LatDistance(0, 1));
  EXPECT_NEAR(LatDistance(0, 1), kEarthRadiusMeters * M_PI / 180, 1e-6);
}

TEST(Geohash, StepEstimation) {
  EXPECT_EQ(EstimateStepsByRadius(0, 0), 26);
  EXPECT_EQ(EstimateStepsByRadius(1, 0), 24);
  EXPECT_EQ(EstimateStepsByRadius(5000000, 0), 2);
  EXPECT_EQ(EstimateStepsByRadius(20000000, 0), 1);
  EXPECT_EQ(EstimateStepsByRadius(1000, 0), EstimateStepsByRadius(1000, 70) + 1);
  EXPECT_EQ(EstimateStepsByRadius(1000, 0), EstimateStepsByRadius(1000, -81) + 2);
}

TEST(Geohash, CellsCoverTheShape) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> lon(-170, 170), lat(-80, 80), radius(1, 200000);
  for (int i = 0; i < 2000; ++i) {
    Shape s;
    s.lon = lon(rng);
    s.lat = lat(rng);
    s.radius = radius(rng);
    SearchCells cells = CellsForShape(s);
    EXPECT_FALSE(cells.cells[0].IsZero());
    // The centre's own score lies in the centre cell.
    uint64_t score = ScoreOf(s.lon, s.lat), min, max;
    ScoreRangeOf(cells.cells[0], &min, &max);
    EXPECT_LE(min, score);
    EXPECT_LT(score, max);
  }
}

TEST(Geohash, WithinShape) {
  Shape circle;
  circle.lon = 15;
  circle.lat = 37;
  circle.radius = 100;
  circle.conversion = 1000;
  double xy[2], dist;
  EXPECT_TRUE(WithinShape(circle, 3479447370796909.0, xy, &dist));  // Catania, 56 km
  EXPECT_EQ(Dist(dist / 1000), "56.4413");
  EXPECT_FALSE(WithinShape(circle, 3479099956230698.0, xy, &dist));  // Palermo, 190 km
  Shape box = circle;
  box.type = Shape::Type::kBox;
  box.width = 400;
  box.height = 400;
  EXPECT_TRUE(WithinShape(box, 3479099956230698.0, xy, &dist));
  box.height = 100;
  EXPECT_FALSE(WithinShape(box, 3479099956230698.0, xy, &dist));
}

TEST(Geohash, DistanceFormatting) {
  EXPECT_EQ(Dist(0), "0.0000");
  EXPECT_EQ(Dist(0.00004), "0.0000");
  // The scaled value is rounded half to even by llrint (printf's "%.4f" would say 0.0001).
  EXPECT_EQ(Dist(0.00005), "0.0000");
  EXPECT_EQ(Dist(1.23456), "1.2346");
  EXPECT_EQ(Dist(0.775), "0.7750");
  EXPECT_EQ(Dist(12345.6), "12345.6000");
  EXPECT_EQ(Dist(-3.14159), "-3.1416");
  EXPECT_EQ(Dist(-0.00001), "0.0000");
}

TEST(Geohash, CoordinateFormatting) {
  EXPECT_EQ(Coord(180), "180");
  EXPECT_EQ(Coord(-0.0), "0");
  EXPECT_EQ(Coord(0.5), "0.5");
  EXPECT_EQ(Coord(0.1), "0.10000000000000001");
  EXPECT_EQ(Coord(-179.99999731779098511), "-179.99999731779098511");
}

}  // namespace
}  // namespace vireo::geo
