// The cost of the ACL check per command (issue 18: under 3 % of a request's server CPU with a
// restricted user). Whole-server runs (bench/compare with --conn-setup "AUTH app pw") swing by
// more than the effect, so the check is timed here alone: AclUser::Check on SET and GET
// arguments for the default user (all permitted) and for `~app:* +@read +@write`.
#include <benchmark/benchmark.h>

#include <string>
#include <string_view>
#include <vector>

#include "../tests/unit/test_commands.h"
#include "core/command_table.h"
#include "security/acl.h"

namespace vireo {
namespace {

AclUser MakeUser(const std::vector<std::string>& rules) {
  AclUser user(TestCommands(), "app", false);
  std::string error;
  if (!user.ApplyAll(rules, &error)) std::abort();
  return user;
}

void RunCheck(benchmark::State& state, const AclUser& user, std::vector<std::string_view> argv) {
  const CommandSpec* spec = TestCommands().Find(argv[0]);
  if (spec == nullptr) std::abort();
  size_t pos = 0;
  for (auto _ : state) {
    AclResult r = user.Check(*spec, argv, &pos);
    benchmark::DoNotOptimize(r);
  }
}

const std::vector<std::string> kDefaultRules = {"on", "nopass", "~*", "&*", "+@all"};
const std::vector<std::string> kRestrictedRules = {"on", ">pw", "~app:*", "+@read", "+@write"};

void BM_DefaultUserGet(benchmark::State& state) {
  RunCheck(state, MakeUser(kDefaultRules), {"GET", "app:000000012345"});
}
void BM_RestrictedUserGet(benchmark::State& state) {
  RunCheck(state, MakeUser(kRestrictedRules), {"GET", "app:000000012345"});
}
void BM_DefaultUserSet(benchmark::State& state) {
  RunCheck(state, MakeUser(kDefaultRules), {"SET", "app:000000012345", "xxx"});
}
void BM_RestrictedUserSet(benchmark::State& state) {
  RunCheck(state, MakeUser(kRestrictedRules), {"SET", "app:000000012345", "xxx"});
}
void BM_RestrictedUserMset(benchmark::State& state) {
  RunCheck(state, MakeUser(kRestrictedRules),
           {"MSET", "app:1", "a", "app:2", "b", "app:3", "c", "app:4", "d"});
}

BENCHMARK(BM_DefaultUserGet);
BENCHMARK(BM_RestrictedUserGet);
BENCHMARK(BM_DefaultUserSet);
BENCHMARK(BM_RestrictedUserSet);
BENCHMARK(BM_RestrictedUserMset);

}  // namespace
}  // namespace vireo

BENCHMARK_MAIN();
