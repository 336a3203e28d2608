#include "types/stream.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "types/stream_groups.h"

namespace vireo {
namespace {

using Entry = std::pair<StreamID, std::vector<std::string>>;

std::vector<Entry> All(const Stream& s, bool reverse = false, StreamID start = StreamID::Min(),
                       StreamID end = StreamID::Max()) {
  std::vector<Entry> out;
  s.Range(start, end, reverse, 0, [&](const StreamEntryView& e) {
    out.emplace_back(e.id, std::vector<std::string>(e.field_values.begin(), e.field_values.end()));
    return true;
  });
  return out;
}

void Add(Stream& s, StreamID id, std::vector<std::string_view> fv, Stream::NodeLimits limits = {}) {
  s.Append(id, fv, limits);
}

TEST(StreamIdTest, Parse) {
  StreamID id;
  ASSERT_TRUE(ParseStreamID("5-3", &id, 0, true));
  EXPECT_EQ(id, (StreamID{5, 3}));
  ASSERT_TRUE(ParseStreamID("7", &id, UINT64_MAX, true));
  EXPECT_EQ(id, (StreamID{7, UINT64_MAX}));
  EXPECT_FALSE(ParseStreamID("-", &id, 0, true));
  ASSERT_TRUE(ParseStreamID("-", &id, 0, false));
  EXPECT_EQ(id, StreamID::Min());
  ASSERT_TRUE(ParseStreamID("+", &id, 0, false));
  EXPECT_EQ(id, StreamID::Max());
  EXPECT_FALSE(ParseStreamID("1-2-3", &id, 0, true));
  EXPECT_FALSE(ParseStreamID("abc", &id, 0, true));
  EXPECT_FALSE(ParseStreamID("-1", &id, 0, true));
  EXPECT_FALSE(ParseStreamID("5-*", &id, 0, true));
  bool star = false;
  ASSERT_TRUE(ParseStreamID("5-*", &id, 0, true, &star));
  EXPECT_TRUE(star);
  ASSERT_TRUE(ParseStreamID("18446744073709551615-18446744073709551615", &id, 0, true));
  EXPECT_EQ(id, StreamID::Max());
  EXPECT_FALSE(id.Increment());
  StreamID zero;
  EXPECT_FALSE(zero.Decrement());
  StreamID x{3, UINT64_MAX};
  ASSERT_TRUE(x.Increment());
  EXPECT_EQ(x, (StreamID{4, 0}));
}

TEST(StreamTest, AppendAndIterate) {
  Stream s;
  Add(s, {1, 0}, {"a", "1", "b", "2"});
  Add(s, {1, 1}, {"a", "3", "b", "4"});      // same fields as the master
  Add(s, {2, 0}, {"c", "x"});                // different fields
  Add(s, {3, 0}, {"a", "-12", "b", "big"});  // integer-looking values
  EXPECT_EQ(s.length(), 4u);
  EXPECT_EQ(s.last_id(), (StreamID{3, 0}));
  EXPECT_EQ(s.first_id(), (StreamID{1, 0}));
  EXPECT_EQ(s.entries_added(), 4u);
  auto all = All(s);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].second, (std::vector<std::string>{"a", "1", "b", "2"}));
  EXPECT_EQ(all[1].second, (std::vector<std::string>{"a", "3", "b", "4"}));
  EXPECT_EQ(all[2].second, (std::vector<std::string>{"c", "x"}));
  EXPECT_EQ(all[3].second, (std::vector<std::string>{"a", "-12", "b", "big"}));
  auto rev = All(s, true);
  ASSERT_EQ(rev.size(), 4u);
  EXPECT_EQ(rev[0].first, (StreamID{3, 0}));
  EXPECT_EQ(rev[3].first, (StreamID{1, 0}));
  auto mid = All(s, false, {1, 1}, {2, 0});
  ASSERT_EQ(mid.size(), 2u);
  EXPECT_EQ(mid[0].first, (StreamID{1, 1}));
}

TEST(StreamTest, IntegerStringsRoundTrip) {
  Stream s;
  std::vector<std::string> values = {"0",
                                     "-0",
                                     "01",
                                     "9223372036854775807",
                                     "-9223372036854775808",
                                     "18446744073709551616",
                                     "",
                                     " 1",
                                     "+1",
                                     "123456789"};
  uint64_t ms = 1;
  for (const std::string& v : values) Add(s, {ms++, 0}, {v, v});
  auto all = All(s);
  ASSERT_EQ(all.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(all[i].second[0], values[i]);
    EXPECT_EQ(all[i].second[1], values[i]);
  }
}

TEST(StreamTest, BlocksSplitByEntriesAndBytes) {
  Stream s;
  Stream::NodeLimits limits{0, 10};
  for (uint64_t i = 1; i <= 95; ++i) Add(s, {i, 0}, {"f", "v"}, limits);
  EXPECT_EQ(s.block_count(), 10u);
  Stream b;
  Stream::NodeLimits bytes{100, 0};
  std::string big(60, 'x');
  for (uint64_t i = 1; i <= 5; ++i) Add(b, {i, 0}, {"f", big}, bytes);
  EXPECT_EQ(b.block_count(), 5u);
  EXPECT_EQ(All(b).size(), 5u);
}

// Blocks end where Redis's listpack nodes end (issue 15): one entry with its own field, then
// 109 with other fields. Redis fits 59 entries in the first 4096-byte node, so MAXLEN ~ 20
// removes 59 (XLEN 51).
TEST(StreamTest, BlocksEndWhereRedisNodesEnd) {
  Stream s;
  Add(s, {1000, 0}, {"x", "1"});
  std::vector<std::string> ids;
  for (int i = 0; i < 109; ++i) ids.push_back(std::to_string(i));
  for (int i = 0; i < 109; ++i) {
    Add(s, {1000 + static_cast<uint64_t>(i) / 10, 1 + static_cast<uint64_t>(i)},
        {"event", "completed", "jobId", ids[i], "returnvalue", "null", "prev", "active"});
  }
  EXPECT_EQ(s.block_count(), 2u);
  EXPECT_EQ(s.TrimByLength(20, true, 0), 59);
  EXPECT_EQ(s.length(), 51u);
}

// Redis measures a node in listpack bytes: header, master entry, each element's encoding and
// back-length. 4096 bytes hold 100 small entries but only 81 with a 40-byte value (50 listpack
// bytes each, checked against redis-server: MAXLEN ~ 200 of 300 removes 81).
TEST(StreamTest, BlockBytesFollowListpackEncoding) {
  Stream small;
  for (uint64_t i = 1; i <= 150; ++i) Add(small, {i, 0}, {"f", "7"});
  EXPECT_EQ(small.block_count(), 2u);  // 100 + 50, by entry count
  Stream wide;
  std::string value(40, 'v');
  for (uint64_t i = 1; i <= 300; ++i) Add(wide, {i, 0}, {"f", value});
  EXPECT_EQ(wide.block_count(), 4u);
  EXPECT_EQ(wide.TrimByLength(200, true, 0), 81);
  // Entries whose fields differ from the master's carry their field names too.
  Stream mixed;
  Add(mixed, {1, 0}, {"a", "1"});
  for (uint64_t i = 2; i <= 150; ++i) Add(mixed, {i, 0}, {"b", "1"});
  EXPECT_EQ(mixed.block_count(), 2u);
}

// A stream loaded from a snapshot sizes its blocks as the one that wrote it: appending the same
// entries to both starts new blocks at the same IDs.
TEST(StreamTest, LoadedBlocksKeepTheirSize) {
  Stream s;
  for (uint64_t i = 1; i <= 130; ++i) {
    Add(s, {i, 0}, {"event", "done", "id", std::to_string(i * 977)});
  }
  ASSERT_TRUE(s.Delete({129, 0}));
  Stream copy;
  {
    Stream::BlockLoader loader(&copy);
    struct Copier : Stream::BlockVisitor {
      Stream::BlockLoader* loader;
      void BeginBlock(StreamID master, uint32_t, uint32_t,
                      std::span<const Stream::RawString> fields) override {
        loader->BeginBlock(master, fields, 0);
      }
      void Entry(bool deleted, bool same, StreamID id,
                 std::span<const Stream::RawString> items) override {
        loader->Entry(deleted, same, id, items);
      }
      void EndBlock() override { loader->EndBlock(); }
    } copier;
    copier.loader = &loader;
    s.VisitBlocks(copier);
  }
  for (uint64_t i = 131; i <= 260; ++i) {
    std::string v(static_cast<size_t>(i % 50), 'z');
    Add(s, {i, 0}, {"event", v, "id", "7"});
    Add(copy, {i, 0}, {"event", v, "id", "7"});
    ASSERT_EQ(copy.block_count(), s.block_count()) << i;
  }
  EXPECT_EQ(copy.TrimByLength(100, true, 0), s.TrimByLength(100, true, 0));
}

TEST(StreamTest, DeleteUpdatesMetadata) {
  Stream s;
  for (uint64_t i = 1; i <= 5; ++i) Add(s, {i, 0}, {"f", "v"});
  EXPECT_FALSE(s.Delete({9, 0}));
  EXPECT_TRUE(s.Delete({1, 0}));
  EXPECT_FALSE(s.Delete({1, 0}));
  EXPECT_EQ(s.first_id(), (StreamID{2, 0}));
  EXPECT_EQ(s.max_deleted_id(), (StreamID{1, 0}));
  EXPECT_TRUE(s.Delete({3, 0}));
  EXPECT_EQ(s.max_deleted_id(), (StreamID{3, 0}));
  EXPECT_TRUE(s.Delete({2, 0}));
  EXPECT_EQ(s.max_deleted_id(), (StreamID{3, 0}));
  EXPECT_EQ(s.first_id(), (StreamID{4, 0}));
  EXPECT_EQ(s.length(), 2u);
  EXPECT_FALSE(s.Contains({3, 0}));
  EXPECT_TRUE(s.Contains({4, 0}));
  EXPECT_TRUE(s.Delete({4, 0}));
  EXPECT_TRUE(s.Delete({5, 0}));
  EXPECT_EQ(s.length(), 0u);
  EXPECT_EQ(s.first_id(), StreamID::Min());
  EXPECT_EQ(s.block_count(), 0u);
  EXPECT_EQ(s.last_id(), (StreamID{5, 0}));
}

TEST(StreamTest, TrimExactAndApprox) {
  Stream::NodeLimits limits{0, 10};
  Stream s;
  for (uint64_t i = 1; i <= 100; ++i) Add(s, {i, 0}, {"f", "v"}, limits);
  EXPECT_EQ(s.TrimByLength(55, true, 0), 40);  // whole blocks only
  EXPECT_EQ(s.length(), 60u);
  EXPECT_EQ(s.TrimByLength(55, false, 0), 5);
  EXPECT_EQ(s.length(), 55u);
  EXPECT_EQ(s.first_id(), (StreamID{46, 0}));
  EXPECT_EQ(s.TrimByMinId({71, 0}, true, 0), 25);  // blocks ending before 71-0
  EXPECT_EQ(s.first_id(), (StreamID{71, 0}));
  EXPECT_EQ(s.TrimByMinId({75, 0}, false, 0), 4);
  EXPECT_EQ(s.first_id(), (StreamID{75, 0}));
  EXPECT_EQ(s.TrimByLength(0, true, 10), 6);  // the partial block, then LIMIT stops it
  EXPECT_EQ(s.length(), 20u);
  EXPECT_EQ(s.max_deleted_id(), StreamID::Min());  // trimming never sets it
  EXPECT_EQ(s.TrimByLength(0, false, 0), 20);
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.first_id(), StreamID::Min());
}

TEST(StreamTest, NextId) {
  Stream s;
  StreamID id;
  ASSERT_TRUE(s.NextId(100, &id));
  EXPECT_EQ(id, (StreamID{100, 0}));
  Add(s, {100, 5}, {"f", "v"});
  ASSERT_TRUE(s.NextId(50, &id));  // the clock went back: keep the last ms
  EXPECT_EQ(id, (StreamID{100, 6}));
  ASSERT_TRUE(s.NextIdForMs(100, &id));
  EXPECT_EQ(id, (StreamID{100, 6}));
  EXPECT_FALSE(s.NextIdForMs(99, &id));
  s.set_last_id({7, UINT64_MAX});
  EXPECT_FALSE(s.NextIdForMs(7, &id));
}

TEST(StreamTest, RandomAgainstModel) {
  std::mt19937_64 rng(42);
  Stream s;
  std::map<StreamID, std::vector<std::string>> model;
  Stream::NodeLimits limits{256, 16};
  uint64_t ms = 1;
  for (int step = 0; step < 20000; ++step) {
    int op = static_cast<int>(rng() % 10);
    if (op < 6 || model.empty()) {
      ms += rng() % 3;
      StreamID id{ms, rng() % 4};
      if (id <= s.last_id()) id = {s.last_id().ms, s.last_id().seq + 1};
      std::vector<std::string> fv;
      size_t n = 1 + rng() % 3;
      for (size_t i = 0; i < n; ++i) {
        fv.push_back(rng() % 2 ? "f" + std::to_string(i) : "g");
        fv.push_back(std::to_string(rng() % 1000 - 500) + (rng() % 3 ? "" : "x"));
      }
      std::vector<std::string_view> views(fv.begin(), fv.end());
      s.Append(id, views, limits);
      model[id] = fv;
    } else if (op < 8) {
      auto it = model.begin();
      std::advance(it, static_cast<long>(rng() % model.size()));
      EXPECT_TRUE(s.Delete(it->first));
      model.erase(it);
    } else if (op == 8) {
      uint64_t keep = rng() % (model.size() + 1);
      s.TrimByLength(keep, false, 0);
      while (model.size() > keep) model.erase(model.begin());
    } else {
      auto lo = model.begin();
      auto hi = std::prev(model.end());
      StreamID start = lo->first, end = hi->first;
      auto got = All(s, rng() % 2 == 0, start, end);
      EXPECT_EQ(got.size(), model.size());
    }
    ASSERT_EQ(s.length(), model.size());
    if (!model.empty()) {
      ASSERT_EQ(s.first_id(), model.begin()->first);
    }
  }
  auto got = All(s);
  ASSERT_EQ(got.size(), model.size());
  size_t i = 0;
  for (const auto& [id, fv] : model) {
    EXPECT_EQ(got[i].first, id);
    EXPECT_EQ(got[i].second, fv);
    ++i;
  }
  auto copy = s.Clone();
  EXPECT_EQ(All(static_cast<Stream&>(*copy)).size(), model.size());
}

TEST(StreamGroupsTest, PelAndConsumers) {
  Stream s;
  for (uint64_t i = 1; i <= 5; ++i) Add(s, {i, 0}, {"f", "v"});
  ConsumerGroup* g = s.MutableGroups().Create("g", StreamID::Min(), 0);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(s.MutableGroups().Create("g", StreamID::Min(), 0), nullptr);
  bool created;
  StreamConsumer* alice = g->GetOrCreateConsumer("alice", 10, &created);
  EXPECT_TRUE(created);
  StreamConsumer* bob = g->GetOrCreateConsumer("bob", 10, &created);
  g->Deliver({1, 0}, alice, 100);
  g->Deliver({2, 0}, alice, 100);
  EXPECT_EQ(alice->pel.size(), 2u);
  PendingEntry* p = g->FindPending({1, 0});
  ASSERT_NE(p, nullptr);
  g->Reassign(p, bob);
  EXPECT_EQ(alice->pel.size(), 1u);
  EXPECT_EQ(bob->pel.size(), 1u);
  // Re-delivery after SETID moves the entry and resets its count.
  p->delivery_count = 5;
  g->Deliver({1, 0}, alice, 200);
  EXPECT_EQ(p->delivery_count, 1u);
  EXPECT_EQ(p->consumer, alice);
  EXPECT_TRUE(bob->pel.empty());
  EXPECT_TRUE(g->Ack({1, 0}));
  EXPECT_FALSE(g->Ack({1, 0}));
  EXPECT_EQ(g->DeleteConsumer("alice"), 1);
  EXPECT_EQ(g->DeleteConsumer("alice"), -1);
  EXPECT_TRUE(g->pel().empty());
  auto copy = s.Clone();
  EXPECT_EQ(static_cast<Stream&>(*copy).groups()->size(), 1u);
  EXPECT_TRUE(s.MutableGroups().Destroy("g"));
}

std::vector<StreamID> NackOrder(const ConsumerGroup& g) {
  std::vector<StreamID> out;
  for (const PendingEntry* p : g.NackedInOrder()) out.push_back(p->id);
  return out;
}

TEST(StreamGroupsTest, NackZoneIsAFifo) {
  Stream s;
  for (uint64_t i = 1; i <= 5; ++i) Add(s, {i, 0}, {"f", "v"});
  ConsumerGroup* g = s.MutableGroups().Create("g", StreamID::Min(), 0);
  bool created;
  StreamConsumer* alice = g->GetOrCreateConsumer("alice", 10, &created);
  for (uint64_t i = 1; i <= 4; ++i) g->Deliver({i, 0}, alice, 100);
  EXPECT_EQ(g->FirstNacked(), nullptr);

  // Releasing unowns the entry, zeroes its delivery time and appends it to the zone.
  PendingEntry* p3 = g->AddNacked({3, 0}, 7);
  EXPECT_EQ(p3->consumer, nullptr);
  EXPECT_EQ(p3->delivery_time_ms, 0);
  EXPECT_EQ(p3->delivery_count, 7u);
  EXPECT_TRUE(p3->nacked());
  EXPECT_EQ(alice->pel.count({3, 0}), 0u);
  g->AddNacked({1, 0}, 1);
  g->AddNacked({2, 0}, 1);
  EXPECT_EQ(NackOrder(*g), (std::vector<StreamID>{{3, 0}, {1, 0}, {2, 0}}));
  EXPECT_EQ(g->nacked_count(), 3u);
  EXPECT_EQ(g->pel().size(), 4u);
  // Re-NACK moves to the end.
  g->AddNacked({3, 0}, 7);
  EXPECT_EQ(NackOrder(*g), (std::vector<StreamID>{{1, 0}, {2, 0}, {3, 0}}));
  EXPECT_EQ(g->FirstNacked()->id, (StreamID{1, 0}));

  // XACK, claims (Reassign), re-delivery and owned AddPending all leave the zone.
  EXPECT_TRUE(g->Ack({1, 0}));
  g->Reassign(g->FindPending({2, 0}), alice);
  EXPECT_FALSE(g->FindPending({2, 0})->nacked());
  EXPECT_EQ(alice->pel.count({2, 0}), 1u);
  EXPECT_EQ(NackOrder(*g), (std::vector<StreamID>{{3, 0}}));
  g->Deliver({3, 0}, alice, 300);
  EXPECT_EQ(g->nacked_count(), 0u);
  g->AddNacked({3, 0}, 1);
  g->AddPending({3, 0}, alice, 400, 2);
  EXPECT_EQ(g->nacked_count(), 0u);

  // A FORCE-style release of an entry that wasn't pending creates it in the zone.
  g->AddNacked({5, 0}, 0);
  EXPECT_EQ(g->pel().size(), 4u);
  // Deleting the owner keeps the NACKed entry.
  g->AddNacked({4, 0}, 1);
  EXPECT_EQ(g->DeleteConsumer("alice"), 2);
  EXPECT_EQ(NackOrder(*g), (std::vector<StreamID>{{5, 0}, {4, 0}}));
  EXPECT_EQ(g->pel().size(), 2u);
}

TEST(StreamGroupsTest, NackZoneCountSaturates) {
  PendingEntry p;
  p.delivery_count = static_cast<uint64_t>(INT64_MAX) - 1;
  p.CountDelivery();
  p.CountDelivery();
  EXPECT_EQ(p.delivery_count, static_cast<uint64_t>(INT64_MAX));
}

TEST(StreamGroupsTest, CloneKeepsNackZoneOrder) {
  Stream s;
  for (uint64_t i = 1; i <= 4; ++i) Add(s, {i, 0}, {"f", "v"});
  ConsumerGroup* g = s.MutableGroups().Create("g", StreamID::Min(), 0);
  bool created;
  StreamConsumer* bob = g->GetOrCreateConsumer("bob", 10, &created);
  for (uint64_t i = 1; i <= 4; ++i) g->Deliver({i, 0}, bob, 100);
  g->AddNacked({4, 0}, 3);
  g->AddNacked({2, 0}, 0);
  auto copy = s.Clone();
  const ConsumerGroup* cg = static_cast<Stream&>(*copy).groups()->Find("g");
  ASSERT_NE(cg, nullptr);
  EXPECT_EQ(NackOrder(*cg), (std::vector<StreamID>{{4, 0}, {2, 0}}));
  EXPECT_EQ(cg->NackedInOrder()[0]->delivery_count, 3u);
  EXPECT_EQ(cg->pel().size(), 4u);
  EXPECT_EQ(cg->FindConsumer("bob")->pel.size(), 2u);
  // The copy's zone is its own.
  g->Ack({4, 0});
  EXPECT_EQ(cg->nacked_count(), 2u);
}

TEST(StreamTest, LagEstimate) {
  Stream s;
  EXPECT_EQ(s.EstimateDistanceFromFirstEver({5, 0}), 0);
  for (uint64_t i = 1; i <= 5; ++i) Add(s, {i, 0}, {"f", "v"});
  EXPECT_EQ(s.EstimateDistanceFromFirstEver({5, 0}), 5);
  EXPECT_EQ(s.EstimateDistanceFromFirstEver({1, 0}), 1);
  EXPECT_EQ(s.EstimateDistanceFromFirstEver({0, 1}), 0);
  EXPECT_EQ(s.EstimateDistanceFromFirstEver({3, 0}), -1);
  EXPECT_EQ(s.EstimateDistanceFromFirstEver({9, 0}), -1);
  s.Delete({3, 0});
  EXPECT_TRUE(s.RangeHasTombstones({2, 0}, StreamID::Max()));
  EXPECT_FALSE(s.RangeHasTombstones({4, 0}, StreamID::Max()));
}

// Copies a stream block by block through the raw interface the RDB codec uses.
class RawCopier : public Stream::BlockVisitor {
 public:
  explicit RawCopier(Stream* dst) : loader_(dst) {}
  void BeginBlock(StreamID master, uint32_t live, uint32_t deleted,
                  std::span<const Stream::RawString> master_fields) override {
    ++blocks;
    live_total += live;
    deleted_total += deleted;
    EXPECT_TRUE(loader_.BeginBlock(master, master_fields, 0));
  }
  void Entry(bool deleted, bool same_fields, StreamID id,
             std::span<const Stream::RawString> items) override {
    for (const auto& r : items) ints += r.is_int;
    EXPECT_TRUE(loader_.Entry(deleted, same_fields, id, items));
  }
  void EndBlock() override { loader_.EndBlock(); }

  size_t blocks = 0, live_total = 0, deleted_total = 0, ints = 0;

 private:
  Stream::BlockLoader loader_;
};

TEST(StreamRawTest, VisitAndLoadRoundTrip) {
  Stream s;
  Stream::NodeLimits small{200, 5};
  std::string big = std::to_string(INT64_MIN);  // an integer too wide for the varint form
  for (uint64_t i = 1; i <= 40; ++i) {
    std::string v = std::to_string(i * 1000);
    if (i % 7 == 0) {
      Add(s, {i, i % 3}, {"other", "x", "n", big}, small);
    } else {
      Add(s, {i, i % 3}, {"f", v, "g", "text"}, small);
    }
  }
  for (uint64_t i : {2, 3, 11, 12, 13, 14, 15}) ASSERT_TRUE(s.Delete({i, i % 3}));
  Stream copy;
  RawCopier copier(&copy);
  s.VisitBlocks(copier);
  copier.EndBlock();
  EXPECT_EQ(copier.blocks, s.block_count());
  EXPECT_EQ(copier.live_total, s.length());
  EXPECT_EQ(copier.deleted_total, 2u);  // 11..15 filled a block of their own, which was freed
  EXPECT_GT(copier.ints, 0u);
  EXPECT_EQ(copy.length(), s.length());
  EXPECT_EQ(copy.block_count(), s.block_count());
  EXPECT_EQ(copy.first_id(), s.first_id());
  EXPECT_EQ(All(copy), All(s));
  EXPECT_EQ(All(copy, true), All(s, true));
  // The copy keeps working: deletes, appends into its tail block.
  EXPECT_TRUE(copy.Delete({4, 1}));
  EXPECT_FALSE(copy.Delete({3, 0}));  // deleted before the copy
  Add(copy, {100, 0}, {"f", "1", "g", "2"}, small);
  EXPECT_EQ(All(copy).back().first, (StreamID{100, 0}));
}

TEST(StreamRawTest, LoaderRejectsWhatWouldBreakTheStream) {
  Stream s;
  Stream::BlockLoader loader(&s);
  Stream::RawString f{false, 0, "f"}, v{true, 5, {}};
  std::vector<Stream::RawString> fields{f}, values{v}, pair{f, v};
  ASSERT_TRUE(loader.BeginBlock({10, 0}, fields, 0));
  EXPECT_FALSE(loader.Entry(false, true, {9, 0}, values));  // below the block's master ID
  EXPECT_TRUE(loader.Entry(false, true, {10, 0}, values));
  EXPECT_FALSE(loader.Entry(false, true, {10, 0}, values));   // not increasing
  EXPECT_FALSE(loader.Entry(false, true, {11, 0}, pair));     // shape differs from the master
  EXPECT_FALSE(loader.Entry(false, false, {11, 0}, values));  // odd field/value count
  EXPECT_FALSE(loader.Entry(false, false, {11, 0}, {}));      // no fields at all
  EXPECT_TRUE(loader.Entry(true, false, {12, 0}, pair));
  EXPECT_FALSE(loader.BeginBlock({12, 0}, fields, 0));  // key not above what was loaded
  ASSERT_TRUE(loader.BeginBlock({13, 0}, fields, 0));
  EXPECT_TRUE(loader.Entry(true, true, {13, 0}, values));  // a block with no live entry...
  loader.EndBlock();
  EXPECT_EQ(s.block_count(), 1u);  // ...is dropped
  EXPECT_EQ(s.length(), 1u);
  EXPECT_EQ(s.last_id(), (StreamID{13, 0}));
}

}  // namespace
}  // namespace vireo
