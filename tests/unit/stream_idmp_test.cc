#include "types/stream_idmp.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "types/stream.h"

namespace vireo {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000;  // ms

StreamID Id(int64_t ms, uint64_t seq = 0) { return {static_cast<uint64_t>(ms), seq}; }

TEST(StreamIdmpTest, FindRecordAndCounters) {
  StreamIdmp idmp(100, 100);
  EXPECT_EQ(idmp.Find("p1", "a", kT0), nullptr);
  idmp.Record("p1", "a", Id(kT0));
  idmp.Record("p2", "a", Id(kT0, 1));
  ASSERT_NE(idmp.Find("p1", "a", kT0), nullptr);
  EXPECT_EQ(*idmp.Find("p1", "a", kT0), Id(kT0));
  EXPECT_EQ(*idmp.Find("p2", "a", kT0), Id(kT0, 1));
  EXPECT_EQ(idmp.Find("p1", "b", kT0), nullptr);
  EXPECT_EQ(idmp.Find("p3", "a", kT0), nullptr);
  idmp.CountDuplicate();
  EXPECT_EQ(idmp.pids_tracked(), 2u);
  EXPECT_EQ(idmp.iids_tracked(), 2u);
  EXPECT_EQ(idmp.iids_added(), 2u);
  EXPECT_EQ(idmp.iids_duplicates(), 1u);
}

TEST(StreamIdmpTest, BinaryKeys) {
  StreamIdmp idmp(100, 100);
  std::string pid("\0\1\2", 3), iid("x\0y", 3);
  idmp.Record(pid, iid, Id(kT0));
  EXPECT_NE(idmp.Find(pid, iid, kT0), nullptr);
  EXPECT_EQ(idmp.Find(pid, std::string("x\0z", 3), kT0), nullptr);
  EXPECT_EQ(idmp.Find(std::string("\0\1", 2), iid, kT0), nullptr);
}

TEST(StreamIdmpTest, MaxsizeEvictsOldestPerProducer) {
  StreamIdmp idmp(100, 3);
  for (int i = 0; i < 5; ++i) idmp.Record("p1", "r" + std::to_string(i), Id(kT0 + i));
  idmp.Record("p2", "r0", Id(kT0 + 10));
  EXPECT_EQ(idmp.Find("p1", "r0", kT0 + 20), nullptr);
  EXPECT_EQ(idmp.Find("p1", "r1", kT0 + 20), nullptr);
  for (int i = 2; i < 5; ++i)
    EXPECT_NE(idmp.Find("p1", "r" + std::to_string(i), kT0 + 20), nullptr);
  EXPECT_NE(idmp.Find("p2", "r0", kT0 + 20), nullptr);
  EXPECT_EQ(idmp.iids_tracked(), 4u);
  EXPECT_EQ(idmp.iids_added(), 6u);
}

TEST(StreamIdmpTest, DurationExpiresEverywhere) {
  StreamIdmp idmp(1, 100);
  idmp.Record("old", "a", Id(kT0));
  idmp.Record("old", "b", Id(kT0 + 500));
  idmp.Record("new", "a", Id(kT0 + 900));
  // A lookup of any producer drops every expired record of every producer.
  EXPECT_EQ(idmp.Find("new", "zzz", kT0 + 999), nullptr);
  EXPECT_EQ(idmp.iids_tracked(), 3u);
  EXPECT_EQ(idmp.Find("new", "zzz", kT0 + 1000), nullptr);
  EXPECT_EQ(idmp.iids_tracked(), 2u);
  EXPECT_EQ(idmp.Find("old", "a", kT0 + 1000), nullptr);
  EXPECT_NE(idmp.Find("old", "b", kT0 + 1000), nullptr);
  idmp.Expire(kT0 + 1500);
  EXPECT_EQ(idmp.pids_tracked(), 1u);
  idmp.Expire(kT0 + 1900);
  EXPECT_EQ(idmp.pids_tracked(), 0u);
  EXPECT_EQ(idmp.iids_tracked(), 0u);
  EXPECT_EQ(idmp.iids_added(), 3u);
}

TEST(StreamIdmpTest, ConfigureClearsOnlyOnChange) {
  StreamIdmp idmp(100, 100);
  idmp.Record("p", "a", Id(kT0));
  idmp.CountDuplicate();
  EXPECT_FALSE(idmp.Configure(100, 100));
  EXPECT_NE(idmp.Find("p", "a", kT0), nullptr);
  EXPECT_TRUE(idmp.Configure(50, 100));
  EXPECT_EQ(idmp.Find("p", "a", kT0), nullptr);
  EXPECT_EQ(idmp.pids_tracked(), 0u);
  EXPECT_EQ(idmp.iids_tracked(), 0u);
  EXPECT_EQ(idmp.iids_added(), 1u);
  EXPECT_EQ(idmp.iids_duplicates(), 1u);
  EXPECT_EQ(idmp.duration(), 50);
}

TEST(StreamIdmpTest, TrivialState) {
  StreamIdmp idmp(100, 100);
  EXPECT_TRUE(idmp.IsTrivial(100, 100));
  EXPECT_FALSE(idmp.IsTrivial(100, 50));
  idmp.Record("p", "a", Id(kT0));
  EXPECT_FALSE(idmp.IsTrivial(100, 100));
}

TEST(StreamIdmpTest, CloneAndRestoreKeepOrderAndCounters) {
  StreamIdmp idmp(100, 3);
  for (int i = 0; i < 3; ++i) idmp.Record("p", "r" + std::to_string(i), Id(kT0 + i));
  idmp.CountDuplicate();
  auto copy = idmp.Clone();
  EXPECT_EQ(copy->iids_added(), 3u);
  EXPECT_EQ(copy->iids_duplicates(), 1u);
  // The copy evicts in the same order as the original: r0 first.
  copy->Record("p", "r3", Id(kT0 + 3));
  EXPECT_EQ(copy->Find("p", "r0", kT0), nullptr);
  EXPECT_NE(copy->Find("p", "r1", kT0), nullptr);
  EXPECT_NE(idmp.Find("p", "r0", kT0), nullptr);  // the original is untouched

  StreamIdmp restored(100, 3);
  std::string pid;
  idmp.ForEachProducer(
      [&](std::string_view p, size_t n) {
        pid = p;
        EXPECT_EQ(n, 3u);
      },
      [&](std::string_view iid, StreamID id) { restored.Restore(pid, iid, id); });
  EXPECT_EQ(restored.iids_tracked(), 3u);
  EXPECT_EQ(restored.iids_added(), 0u);
  EXPECT_EQ(*restored.Find("p", "r2", kT0), Id(kT0 + 2));
}

TEST(StreamIdmpTest, AutoIidIsOrderIndependent) {
  std::vector<std::string_view> a = {"f1", "a", "f2", "b", "f3", "c"};
  std::vector<std::string_view> b = {"f2", "b", "f3", "c", "f1", "a"};
  std::vector<std::string_view> c = {"f1", "x", "f2", "b", "f3", "c"};
  EXPECT_EQ(StreamIdmp::AutoIid(a), StreamIdmp::AutoIid(b));
  EXPECT_NE(StreamIdmp::AutoIid(a), StreamIdmp::AutoIid(c));
  EXPECT_EQ(StreamIdmp::AutoIid(a).size(), StreamIdmp::kAutoIidSize);
  // Field names matter, the field/value boundary matters, repeated pairs don't cancel.
  std::vector<std::string_view> d1 = {"field1", "value"}, d2 = {"field2", "value"};
  EXPECT_NE(StreamIdmp::AutoIid(d1), StreamIdmp::AutoIid(d2));
  std::vector<std::string_view> e1 = {"ab", "c"}, e2 = {"a", "bc"};
  EXPECT_NE(StreamIdmp::AutoIid(e1), StreamIdmp::AutoIid(e2));
  std::vector<std::string_view> twice = {"f", "v", "f", "v"}, other = {"g", "w", "g", "w"};
  EXPECT_NE(StreamIdmp::AutoIid(twice), StreamIdmp::AutoIid(other));
  std::vector<std::string_view> empty_value = {"f", ""}, value = {"f", "v"};
  EXPECT_NE(StreamIdmp::AutoIid(empty_value), StreamIdmp::AutoIid(value));
}

// A random workload against a plain model (map + per-producer order).
TEST(StreamIdmpTest, MatchesModel) {
  std::mt19937_64 rng(7);
  const int64_t duration = 2, maxsize = 5;
  StreamIdmp idmp(duration, maxsize);
  struct Rec {
    std::string iid;
    StreamID id;
  };
  std::map<std::string, std::vector<Rec>> model;
  int64_t now = kT0;
  uint64_t seq = 0;
  for (int step = 0; step < 20000; ++step) {
    now += static_cast<int64_t>(rng() % 50);
    std::string pid = "p" + std::to_string(rng() % 4);
    std::string iid = "i" + std::to_string(rng() % 12);
    for (auto it = model.begin(); it != model.end();) {
      auto& v = it->second;
      while (!v.empty() && static_cast<int64_t>(v.front().id.ms) <= now - duration * 1000) {
        v.erase(v.begin());
      }
      it = v.empty() ? model.erase(it) : std::next(it);
    }
    const StreamID* found = idmp.Find(pid, iid, now);
    const Rec* expected = nullptr;
    for (const Rec& r : model[pid]) {
      if (r.iid == iid) expected = &r;
    }
    if (model[pid].empty()) model.erase(pid);
    ASSERT_EQ(found != nullptr, expected != nullptr) << step;
    if (found != nullptr) {
      ASSERT_EQ(*found, expected->id);
      continue;
    }
    StreamID id{static_cast<uint64_t>(now), seq++};
    idmp.Record(pid, iid, id);
    auto& v = model[pid];
    v.push_back({iid, id});
    if (static_cast<int64_t>(v.size()) > maxsize) v.erase(v.begin());
    size_t total = 0;
    for (const auto& [p, recs] : model) total += recs.size();
    ASSERT_EQ(idmp.iids_tracked(), total);
    ASSERT_EQ(idmp.pids_tracked(), model.size());
  }
}

// Trimming with reference checks (the Stream side of KEEPREF | DELREF | ACKED).
TEST(StreamTrimRefsTest, AcknowledgedOnlyAndApproxContinues) {
  Stream s;
  Stream::NodeLimits limits{0, 2};
  for (uint64_t i = 1; i <= 5; ++i) {
    std::vector<std::string_view> fv = {"f", "v"};
    s.Append({i, 0}, fv, limits);
  }
  std::vector<uint64_t> removed;
  Stream::TrimRefs refs;
  refs.removable = [](StreamID id) { return id.ms == 1 || id.ms == 2 || id.ms == 4; };
  refs.on_removed = [&](StreamID id) { removed.push_back(id.ms); };
  StreamID stop;
  EXPECT_EQ(s.TrimByMinId({6, 0}, true, 0, &refs, &stop), 3);
  EXPECT_EQ(removed, (std::vector<uint64_t>{1, 2, 4}));
  EXPECT_EQ(s.length(), 2u);
  EXPECT_EQ(s.first_id(), (StreamID{3, 0}));
  EXPECT_EQ(stop, StreamID::Max());
}

TEST(StreamTrimRefsTest, ExactMaxlenSkipsReferenced) {
  Stream s;
  for (uint64_t i = 1; i <= 7; ++i) {
    std::vector<std::string_view> fv = {"f", "v"};
    s.Append({i, 0}, fv, {});
  }
  Stream::TrimRefs refs;
  refs.removable_until = {1, 0};
  refs.removable = [](StreamID) { return true; };
  EXPECT_EQ(s.TrimByLength(1, false, 0, &refs), 1);
  EXPECT_EQ(s.length(), 6u);
  refs.removable_until = StreamID::Max();
  EXPECT_EQ(s.TrimByLength(1, false, 0, &refs), 5);
  EXPECT_EQ(s.length(), 1u);
}

TEST(StreamTrimRefsTest, ApproxStopsAtFirstStraddlingBlock) {
  Stream s;
  Stream::NodeLimits limits{0, 2};
  for (uint64_t i = 1; i <= 6; ++i) {
    std::vector<std::string_view> fv = {"f", "v"};
    s.Append({i, 0}, fv, limits);
  }
  Stream::TrimRefs refs;
  refs.removable = [](StreamID id) { return id.ms != 2; };
  StreamID stop;
  // MINID ~ 4-0: block {1,2} is inside, block {3,4} straddles: stop there.
  EXPECT_EQ(s.TrimByMinId({4, 0}, true, 0, &refs, &stop), 1);
  EXPECT_EQ(stop, (StreamID{3, 0}));
  // Replayed exactly as MINID = stop on a fresh copy with another layout: same result.
  Stream t;
  for (uint64_t i = 1; i <= 6; ++i) {
    std::vector<std::string_view> fv = {"f", "v"};
    t.Append({i, 0}, fv, {0, 100});
  }
  EXPECT_EQ(t.TrimByMinId(stop, false, 0, &refs), 1);
  EXPECT_EQ(t.length(), s.length());
}

}  // namespace
}  // namespace vireo
