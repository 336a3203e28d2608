#include "cluster/nodes_conf.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/config.h"
#include "util/clock.h"
#include "util/strings.h"

namespace vireo::cluster {
namespace {

constexpr std::pair<uint16_t, std::string_view> kFlagNames[] = {
    {kNodeMyself, "myself"}, {kNodeMaster, "master"},
    {kNodeReplica, "slave"}, {kNodePfail, "fail?"},
    {kNodeFail, "fail"},     {kNodeHandshake, "handshake"},
    {kNodeNoAddr, "noaddr"}, {kNodeNoFailover, "nofailover"}};

std::string FlagsText(uint16_t flags) {
  std::string out;
  for (const auto& [flag, name] : kFlagNames) {
    if ((flags & flag) == 0) continue;
    if (!out.empty()) out += ',';
    out += name;
  }
  return out.empty() ? "noflags" : out;
}

// Redis's verifyClusterNodeId: exactly 40 characters of [a-z0-9].
bool ValidNodeId(std::string_view id) {
  if (id.size() != kNodeIdLen) return false;
  for (char c : id) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

// Aux keys and values may not contain the characters nodes.conf uses as separators.
bool ValidAuxString(std::string_view s) {
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) continue;
    if (std::strchr("!#$%&()*+:;<>?@[]^{|}~", c) != nullptr) return false;
  }
  return true;
}

bool ParsePort(std::string_view text, int* out) {
  int64_t v;
  if (text.empty() || text.size() > 5 || !ParseInt64(text, &v) || v < 0 || v > 65535) {
    return false;
  }
  *out = static_cast<int>(v);
  return true;
}

bool ParseSlot(std::string_view text, int* out) {
  int64_t v;
  if (!ParseInt64(text, &v) || v < 0 || v >= kSlotCount) return false;
  *out = static_cast<int>(v);
  return true;
}

ClusterNode* FindOrAdd(ClusterState* state, std::string_view name) {
  ClusterNode* node = state->Lookup(name);
  return node != nullptr ? node : state->AddNode(std::string(name), 0);
}

// One parse of a node line; returns "" or what is wrong with it.
class LineParser {
 public:
  LineParser(ClusterState* state, int64_t now_ms, std::set<std::string>* explicit_shard)
      : state_(state), now_ms_(now_ms), explicit_shard_(explicit_shard) {}

  std::string ParseVars(const std::vector<std::string>& argv) {
    if (argv.size() % 2 == 0) return "odd number of vars arguments expected";
    for (size_t j = 1; j < argv.size(); j += 2) {
      uint64_t v = std::strtoull(argv[j + 1].c_str(), nullptr, 10);
      if (EqualsIgnoreCase(argv[j], "currentEpoch")) {
        state_->set_current_epoch(v);
      } else if (EqualsIgnoreCase(argv[j], "lastVoteEpoch")) {
        state_->set_last_vote_epoch(v);
      }
      // Unknown variables are skipped, as Redis does (a newer writer).
    }
    return "";
  }

  std::string ParseNode(const std::vector<std::string>& argv) {
    if (argv.size() < 8) return "a node line has at least 8 fields";
    if (!ValidNodeId(argv[0])) return "invalid node id";
    ClusterNode* n = FindOrAdd(state_, argv[0]);
    if (std::string err = ParseAddress(n, argv[1]); !err.empty()) return err;
    if (std::string err = ParseFlags(n, argv[2]); !err.empty()) return err;
    if (argv[3] != "-") {
      if (!ValidNodeId(argv[3])) return "invalid master id";
      ClusterNode* master = FindOrAdd(state_, argv[3]);
      if (master == n) return "a node cannot replicate itself";
      n->master = master;
      state_->AddReplica(master, n);
    }
    int64_t v;
    if (!ParseInt64(argv[4], &v)) return "invalid ping-sent time";
    if (v != 0) n->ping_sent = now_ms_;
    if (!ParseInt64(argv[5], &v)) return "invalid pong-received time";
    if (v != 0) n->pong_received = now_ms_;
    if (!ParseInt64(argv[6], &v) || v < 0) return "invalid config epoch";
    // A replica's epoch field shows its master's; its own is 0.
    n->config_epoch = (n->is_replica() && n->master != nullptr) ? 0 : static_cast<uint64_t>(v);
    for (size_t j = 8; j < argv.size(); ++j) {
      if (std::string err = ParseSlotField(n, argv[j]); !err.empty()) return err;
    }
    return "";
  }

 private:
  // ip:port[@cport][,hostname][,aux=value]...
  std::string ParseAddress(ClusterNode* n, std::string_view field) {
    std::vector<std::string_view> parts;
    size_t start = 0;
    while (true) {
      size_t comma = field.find(',', start);
      parts.push_back(field.substr(start, comma == std::string_view::npos ? comma : comma - start));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    n->hostname = parts.size() > 1 ? std::string(parts[1]) : std::string();
    bool aux_tcp = false, aux_tls = false;
    for (size_t i = 2; i < parts.size(); ++i) {
      size_t eq = parts[i].find('=');
      if (eq == std::string_view::npos || parts[i].find('=', eq + 1) != std::string_view::npos) {
        return "invalid aux field";
      }
      std::string_view key = parts[i].substr(0, eq), value = parts[i].substr(eq + 1);
      if (!ValidAuxString(key) || !ValidAuxString(value)) return "invalid aux field";
      if (key == "shard-id") {
        if (!ValidNodeId(value)) return "invalid shard-id";
        n->shard_id = std::string(value);
        explicit_shard_->insert(n->name);
      } else if (key == "nodename") {
        n->human_nodename = std::string(value);
      } else if (key == "tcp-port") {
        if (!ParsePort(value, &n->tcp_port)) return "invalid tcp-port";
        aux_tcp = true;
      } else if (key == "tls-port") {
        if (!ParsePort(value, &n->tls_port)) return "invalid tls-port";
        aux_tls = true;
      } else {
        return "unknown aux field";
      }
    }
    std::string_view addr = parts[0];
    size_t colon = addr.rfind(':');
    if (colon == std::string_view::npos) return "address without a port";
    n->ip = std::string(addr.substr(0, colon));
    std::string_view port_text = addr.substr(colon + 1), bus_text;
    if (size_t at = port_text.find('@'); at != std::string_view::npos) {
      bus_text = port_text.substr(at + 1);
      port_text = port_text.substr(0, at);
    }
    int port;
    if (!ParsePort(port_text, &port)) return "invalid port";
    // The main port is the TLS one when the writer ran with tls-cluster: the aux field names the
    // other one. A file without either aux field predates them.
    if (!aux_tcp && !aux_tls) {
      (state_->config().tls_cluster ? n->tls_port : n->tcp_port) = port;
    } else if (!aux_tcp) {
      n->tcp_port = port;
    } else if (!aux_tls) {
      n->tls_port = port;
    }
    if (bus_text.empty()) {
      n->cport = port + kDefaultBusPortOffset;  // files older than the @cport form
    } else {
      // Not range-checked (Redis reads it with atoi): a node on a port above 55535 without
      // cluster-port writes a bus port above 65535, and must still be able to restart.
      int64_t v;
      if (!ParseInt64(bus_text, &v) || v < 0 || v > INT32_MAX) return "invalid bus port";
      n->cport = static_cast<int>(v);
    }
    return "";
  }

  std::string ParseFlags(ClusterNode* n, std::string_view field) {
    size_t start = 0;
    while (start <= field.size()) {
      size_t comma = field.find(',', start);
      std::string_view flag =
          field.substr(start, comma == std::string_view::npos ? comma : comma - start);
      if (EqualsIgnoreCase(flag, "myself")) {
        if (state_->myself() != nullptr) return "more than one node is myself";
        state_->set_myself(n);
      } else if (EqualsIgnoreCase(flag, "noflags")) {
        // nothing
      } else {
        bool known = false;
        for (const auto& [bit, name] : kFlagNames) {
          if (EqualsIgnoreCase(flag, name)) {
            n->flags |= bit;
            known = true;
          }
        }
        if (!known) return fmt::format("unknown flag '{}'", flag);
        if (EqualsIgnoreCase(flag, "fail")) n->fail_time = now_ms_;
      }
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    return "";
  }

  // "N", "N-M", "[N->-id]" (migrating, myself only) or "[N-<-id]" (importing).
  std::string ParseSlotField(ClusterNode* n, std::string_view field) {
    if (field.empty()) return "invalid slot";
    if (field.front() == '[') {
      size_t dash = field.find('-');
      if (dash == std::string_view::npos || dash + 2 >= field.size() || field.back() != ']') {
        return "invalid open slot";
      }
      char direction = field[dash + 1];
      int slot;
      if (!ParseSlot(field.substr(1, dash - 1), &slot)) return "invalid open slot";
      if ((direction != '>' && direction != '<') || field[dash + 2] != '-') {
        return "invalid open slot";
      }
      std::string_view id = field.substr(dash + 3, field.size() - dash - 4);
      if (!ValidNodeId(id)) return "invalid node id in open slot";
      ClusterNode* other = FindOrAdd(state_, id);
      if (direction == '>') {
        state_->set_migrating_to(slot, other);
      } else {
        state_->set_importing_from(slot, other);
      }
      return "";
    }
    int first, last;
    size_t dash = field.find('-');
    if (dash == std::string_view::npos) {
      if (!ParseSlot(field, &first)) return "invalid slot";
      last = first;
    } else if (!ParseSlot(field.substr(0, dash), &first) ||
               !ParseSlot(field.substr(dash + 1), &last)) {
      return "invalid slot range";
    }
    for (int s = first; s <= last; ++s) state_->AddSlot(n, s);
    return "";
  }

  ClusterState* state_;
  int64_t now_ms_;
  std::set<std::string>* explicit_shard_;
};

}  // namespace

std::string NodeDescription(const ClusterState& state, const ClusterNode& node, bool for_config,
                            bool tls) {
  std::string out =
      fmt::format("{} {}:{}@{}", node.name, node.ip, state.ClientPort(node, tls), node.cport);
  if (!node.hostname.empty()) out += "," + node.hostname;
  if (for_config) {
    // Aux fields, in Redis 7.2's order: the other client port, nodename, shard-id.
    if (node.hostname.empty()) out += ',';
    if (tls) {
      out += fmt::format(",tcp-port={}", node.tcp_port);
    } else {
      out += fmt::format(",tls-port={}", node.tls_port);
    }
    if (!node.human_nodename.empty()) out += ",nodename=" + node.human_nodename;
    if (!node.shard_id.empty()) out += ",shard-id=" + node.shard_id;
  }
  out += ' ';
  out += FlagsText(node.flags);
  out += ' ';
  out += node.master != nullptr ? node.master->name : "-";
  const bool connected = node.link != nullptr || node.has(kNodeMyself);
  out += fmt::format(" {} {} {} {}", node.ping_sent, node.pong_received,
                     state.EffectiveConfigEpoch(node), connected ? "connected" : "disconnected");
  for (const auto& [first, last] : state.SlotRanges(node)) {
    out += first == last ? fmt::format(" {}", first) : fmt::format(" {}-{}", first, last);
  }
  // Only myself's open slots are known here.
  if (node.has(kNodeMyself)) {
    for (int j = 0; j < kSlotCount; ++j) {
      if (const ClusterNode* to = state.migrating_to(j)) {
        out += fmt::format(" [{}->-{}]", j, to->name);
      } else if (const ClusterNode* from = state.importing_from(j)) {
        out += fmt::format(" [{}-<-{}]", j, from->name);
      }
    }
  }
  return out;
}

std::string NodesDescription(const ClusterState& state, bool for_config, bool tls,
                             uint16_t skip_flags) {
  std::string out;
  for (const auto& [name, node] : state.nodes()) {
    if (node->has(skip_flags)) continue;
    out += NodeDescription(state, *node, for_config, tls);
    out += '\n';
  }
  return out;
}

std::string NodesConfText(const ClusterState& state) {
  return NodesDescription(state, true, state.config().tls_cluster, kNodeHandshake) +
         fmt::format("vars currentEpoch {} lastVoteEpoch {}\n", state.current_epoch(),
                     state.last_vote_epoch());
}

bool ParseNodesConf(std::string_view text, ClusterState* state, int64_t now_ms,
                    std::string* error) {
  std::set<std::string> explicit_shard;
  LineParser parser(state, now_ms, &explicit_shard);
  int line_no = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    std::string_view line =
        text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    start = end == std::string_view::npos ? text.size() : end + 1;
    ++line_no;
    bool ok = true;
    std::vector<std::string> argv = SplitArgs(line, &ok);
    // Blank lines come from manual edits, or a writer stopped before truncating.
    if (ok && argv.empty()) continue;
    std::string err = !ok                                 ? "unbalanced quotes"
                      : EqualsIgnoreCase(argv[0], "vars") ? parser.ParseVars(argv)
                                                          : parser.ParseNode(argv);
    if (!err.empty()) {
      *error = fmt::format("line {}: {} (\"{}\")", line_no, err, line);
      return false;
    }
  }
  if (state->myself() == nullptr) {
    *error = "no node is flagged myself";
    return false;
  }
  // A replica belongs to its master's shard: files older than 7.2 have no shard-id, and a
  // replica's line may come before its master's.
  for (const auto& [name, node] : state->nodes()) {
    if (node->master == nullptr) continue;
    if (explicit_shard.count(name) == 0) {
      node->shard_id = node->master->shard_id;
    } else if (explicit_shard.count(node->master->name) != 0 &&
               node->shard_id != node->master->shard_id) {
      *error = fmt::format("node {} has a shard-id different from its master's", name);
      return false;
    }
  }
  // Protection against manual edits: the current epoch is never below a node's config epoch.
  state->set_current_epoch(state->MaxEpoch());
  return true;
}

LoadResult LoadNodesConf(const std::string& path, ClusterState* state, int64_t now_ms,
                         std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return LoadResult::kMissing;
    *error = fmt::format("Loading the cluster node config from {}: {}", path, strerror(errno));
    return LoadResult::kError;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  // An empty file is what a crash between creating and writing leaves: start fresh.
  if (text.empty()) return LoadResult::kMissing;
  std::string why;
  if (!ParseNodesConf(text, state, now_ms, &why)) {
    *error =
        fmt::format("Unrecoverable error: corrupted cluster config file \"{}\", {}", path, why);
    return LoadResult::kError;
  }
  return LoadResult::kLoaded;
}

std::string WriteNodesConf(const std::string& path, std::string_view text, bool fsync) {
  const std::string tmp = fmt::format("{}.tmp-{}-{}", path, getpid(), NowMs());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fmt::format("Could not open temp cluster config file: {}", strerror(errno));
  std::string error;
  size_t offset = 0;
  while (offset < text.size()) {
    ssize_t n = write(fd, text.data() + offset, text.size() - offset);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = fmt::format("Failed after writing ({}) bytes to tmp cluster config file: {}", offset,
                          strerror(errno));
      break;
    }
    offset += static_cast<size_t>(n);
  }
  if (error.empty() && fsync && ::fsync(fd) != 0) {
    error = fmt::format("Could not sync tmp cluster config file: {}", strerror(errno));
  }
  close(fd);
  if (error.empty() && rename(tmp.c_str(), path.c_str()) != 0) {
    error = fmt::format("Could not rename tmp cluster config file: {}", strerror(errno));
  }
  if (!error.empty()) {
    unlink(tmp.c_str());
    return error;
  }
  if (fsync) {
    // The rename is durable only once the directory is.
    std::filesystem::path dir = std::filesystem::path(path).parent_path();
    if (dir.empty()) dir = ".";
    int dfd = open(dir.c_str(), O_RDONLY | O_CLOEXEC);
    if (dfd >= 0) {
      if (::fsync(dfd) != 0) {
        error = fmt::format("Could not sync cluster config file dir: {}", strerror(errno));
      }
      close(dfd);
    }
  }
  return error;
}

}  // namespace vireo::cluster
