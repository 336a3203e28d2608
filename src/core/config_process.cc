// The rest of Redis 7.2's option table: the process (shutdown signals, OOM score, title,
// logging to syslog, supervision), threads, the allocator and active defragmentation, and the
// hidden test knobs. Every option takes Redis's values, bounds and error texts, so a redis.conf
// written for Redis 7.2 loads here; docs/configuration.md lists which ones vireo honours and
// why the others are accepted without effect (vireo has no I/O threads, no jemalloc, ...).
#include <locale.h>

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/config_builders.h"
#include "util/allocator.h"
#include "util/strings.h"

namespace vireo {
namespace {

using config_detail::Bool;
using config_detail::Enum;
using config_detail::kImmutable;
using config_detail::kIntMax;
using config_detail::kLongMax;
using config_detail::kMutable;
using config_detail::kUintMax;
using config_detail::Numeric;
using config_detail::Option;
using config_detail::Special;
using config_detail::String;
using config_detail::Type;

std::string OneOfError(const std::vector<std::pair<std::string, uint32_t>>& values) {
  std::string err = "argument(s) must be one of the following: ";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) err += ", ";
    err += values[i].first;
  }
  return err;
}

// shutdown-on-sigint / shutdown-on-sigterm: Redis's multi-argument enum of flags. "default" is
// no flag; the others combine ("nosave now") and print in table order.
Option ShutdownSignalOption(std::string name, uint32_t ServerConfig::*field) {
  static const std::vector<std::pair<std::string, uint32_t>> kFlags = {{"default", 0},
                                                                       {"save", kShutdownSave},
                                                                       {"nosave", kShutdownNosave},
                                                                       {"now", kShutdownNow},
                                                                       {"force", kShutdownForce}};
  Option o = Special(std::move(name), Type::kList, kMutable);
  o.get = [field](const ServerConfig& c) {
    uint32_t v = c.*field;
    if (v == 0) return std::string("default");
    std::string out;
    for (const auto& [flag_name, bit] : kFlags) {
      if (bit != 0 && (v & bit) == bit) {
        if (!out.empty()) out += ' ';
        out += flag_name;
      }
    }
    return out;
  };
  o.set = [field](ServerConfig& c, const std::vector<std::string>& args) {
    // No argument at all (`--shutdown-on-sigint` alone) fails like an unknown word.
    if (args.empty()) return OneOfError(kFlags);
    uint32_t v = 0;
    for (const std::string& arg : args) {
      bool matched = false;
      for (const auto& [flag_name, bit] : kFlags) {
        if (EqualsIgnoreCase(arg, flag_name)) {
          v |= bit;
          matched = true;
        }
      }
      if (!matched) return OneOfError(kFlags);
    }
    if ((v & kShutdownSave) && (v & kShutdownNosave)) {
      return std::string("shutdown options SAVE and NOSAVE can't be used simultaneously");
    }
    c.*field = v;
    return std::string();
  };
  return o;
}

// oom-score-adj: "yes" is Redis's older spelling of "relative" and is what CONFIG GET shows for
// both (Redis prints the first name in its table with the value).
Option OomScoreAdjOption() {
  Option o = Enum("oom-score-adj", &ServerConfig::oom_score_adj,
                  {"no", "yes", "relative", "absolute"}, kMutable);
  auto plain_set = o.set;
  o.set = [plain_set](ServerConfig& c, const std::vector<std::string>& args) {
    std::string err = plain_set(c, args);
    if (err.empty() && c.oom_score_adj == "relative") c.oom_score_adj = "yes";
    return err;
  };
  return o;
}

// oom-score-adj-values: three integers in [-2000, 2000] for the master, a replica and a
// background child.
Option OomScoreAdjValuesOption() {
  Option o = Special("oom-score-adj-values", Type::kList, kMutable);
  o.get = [](const ServerConfig& c) {
    const auto& v = c.oom_score_adj_values;
    return std::to_string(v[0]) + " " + std::to_string(v[1]) + " " + std::to_string(v[2]);
  };
  o.set = [](ServerConfig& c, const std::vector<std::string>& args) {
    if (args.size() != c.oom_score_adj_values.size()) {
      return std::string("wrong number of arguments");
    }
    std::array<int64_t, 3> values;
    for (size_t i = 0; i < args.size(); ++i) {
      // strtoll over the whole argument, as Redis reads these ("" is 0).
      if (!config_detail::StrtollFull(args[i], 10, &values[i]) || values[i] < -2000 ||
          values[i] > 2000) {
        return std::string(
            "Invalid oom-score-adj-values, elements must be between -2000 and 2000.");
      }
    }
    c.oom_score_adj_values = values;
    return std::string();
  };
  return o;
}

// Like Redis, a template that names an unknown variable, ends inside one, or expands to
// nothing but blanks is refused.
std::string ValidateProcTitleTemplate(const ServerConfig& c, const std::string& tmpl) {
  constexpr char kInvalid[] = "template format is invalid or contains unknown variables";
  // Only the blank check needs values, so the never-empty variables stand in as "x". As in
  // Redis the title counts as "" when validating, and a server outside cluster or sentinel
  // mode has no mode text.
  auto value = [&c](std::string_view var) -> std::optional<std::string> {
    if (var == "unixsocket") return c.unixsocket;
    if (var == "listen-addr" || var == "port" || var == "tls-port" || var == "config-file") {
      return "x";
    }
    if (var == "title" || var == "server-mode") return "";
    return std::nullopt;
  };
  std::string expanded;
  if (!ExpandProcTitleTemplate(tmpl, value, &expanded) ||
      expanded.find_first_not_of(' ') == std::string::npos) {
    return kInvalid;
  }
  return "";
}

}  // namespace

bool ExpandProcTitleTemplate(
    std::string_view tmpl,
    const std::function<std::optional<std::string>(std::string_view var)>& value,
    std::string* out) {
  out->clear();
  size_t p = 0;
  while (p < tmpl.size()) {
    size_t open = tmpl.find('{', p);
    if (open == std::string_view::npos) {
      out->append(tmpl.substr(p));
      break;
    }
    out->append(tmpl.substr(p, open - p));
    if (open + 1 >= tmpl.size()) return false;
    if (tmpl[open + 1] == '{') {
      *out += '{';
      p = open + 2;
      continue;
    }
    size_t close = tmpl.find('}', open + 1);
    if (close == std::string_view::npos) return false;
    std::optional<std::string> v = value(tmpl.substr(open + 1, close - open - 1));
    if (!v) return false;
    *out += *v;
    p = close + 1;
  }
  return true;
}

void Config::DeclareProcessOptions() {
  auto& o = options_;

  // Shutdown. SIGINT / SIGTERM shut down like SHUTDOWN with these modifiers (src/main.cc).
  // vireo's shutdown never waits for lagging replicas, so shutdown-timeout is only stored.
  o.push_back(ShutdownSignalOption("shutdown-on-sigint", &ServerConfig::shutdown_on_sigint));
  o.push_back(ShutdownSignalOption("shutdown-on-sigterm", &ServerConfig::shutdown_on_sigterm));
  o.push_back(
      Numeric("shutdown-timeout", "", &ServerConfig::shutdown_timeout, 0, kIntMax, kMutable));

  // The cron (Server::ScheduleCron): dynamic-hz raises the effective hz while many clients are
  // connected; active-expire-effort gives expiry a bigger share of each tick.
  o.push_back(Bool("dynamic-hz", &ServerConfig::dynamic_hz, kMutable));
  o.push_back(
      Numeric("active-expire-effort", "", &ServerConfig::active_expire_effort, 1, 10, kMutable));
  // Redis rehashes its main dictionaries a millisecond per tick when this is on. vireo's
  // tables always rehash incrementally, a step on each access plus a bounded step per cron
  // tick, so there is no separate pass to switch on or off: accepted, no effect.
  o.push_back(Bool("activerehashing", &ServerConfig::activerehashing, kMutable));

  // The process: OOM score (Server's OomScore writes /proc/self/oom_score_adj), title,
  // transparent huge pages (src/main.cc), supervision, locale.
  o.push_back(OomScoreAdjOption());
  o.push_back(OomScoreAdjValuesOption());
  o.push_back(Bool("set-proc-title", &ServerConfig::set_proc_title, kImmutable));
  o.push_back(String("proc-title-template", &ServerConfig::proc_title_template, kMutable, false));
  {
    // The validator needs the other values (unixsocket), so it wraps the plain setter.
    Option& tmpl = o.back();
    auto plain_set = tmpl.set;
    tmpl.set = [plain_set](ServerConfig& c, const std::vector<std::string>& args) {
      if (std::string err = ValidateProcTitleTemplate(c, args[0]); !err.empty()) return err;
      return plain_set(c, args);
    };
  }
  o.push_back(Bool("disable-thp", &ServerConfig::disable_thp, kImmutable));
  o.push_back(Enum("supervised", &ServerConfig::supervised, {"upstart", "systemd", "auto", "no"},
                   kImmutable));
  // Checked without touching the process's locale: vireo compares strings bytewise (the C
  // locale), so the value is validated as Redis does and stored.
  o.push_back(String("locale-collate", &ServerConfig::locale_collate, kMutable, false,
                     [](const std::string& v) {
                       locale_t loc = newlocale(LC_COLLATE_MASK, v.c_str(), nullptr);
                       if (loc == nullptr) return std::string("Invalid locale name");
                       freelocale(loc);
                       return std::string();
                     }));
  o.push_back(String("ignore-warnings", &ServerConfig::ignore_warnings, kMutable, false));

  // Logging. syslog-* take effect at start-up (src/main.cc adds a syslog sink).
  o.push_back(Bool("syslog-enabled", &ServerConfig::syslog_enabled, kImmutable));
  o.push_back(String("syslog-ident", &ServerConfig::syslog_ident, kImmutable, false));
  o.push_back(
      Enum("syslog-facility", &ServerConfig::syslog_facility,
           {"user", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"},
           kImmutable));
  o.push_back(Bool("always-show-logo", &ServerConfig::always_show_logo, kImmutable));
  o.push_back(Bool("crash-log-enabled", &ServerConfig::crash_log_enabled, kMutable));
  o.push_back(Bool("crash-memcheck-enabled", &ServerConfig::crash_memcheck_enabled, kMutable));

  // The source address of a replica's link to its master (src/replication/replica_link.cc);
  // listening sockets are not marked with socket-mark-id (SO_MARK).
  o.push_back(String("bind-source-addr", &ServerConfig::bind_source_addr, kMutable, true));
  o.push_back(
      Numeric("socket-mark-id", "", &ServerConfig::socket_mark_id, 0, kUintMax, kImmutable));

  // CPU affinity lists (Redis's cpu-list syntax "0-3,8"), threads, the allocator and active
  // defragmentation: vireo is one thread on glibc malloc, so these are accepted and stored.
  for (auto [name, field] : {std::pair{"server_cpulist", &ServerConfig::server_cpulist},
                             std::pair{"bio_cpulist", &ServerConfig::bio_cpulist},
                             std::pair{"aof_rewrite_cpulist", &ServerConfig::aof_rewrite_cpulist},
                             std::pair{"bgsave_cpulist", &ServerConfig::bgsave_cpulist}}) {
    o.push_back(String(name, field, kImmutable, true));
  }
  o.push_back(Numeric("io-threads", "", &ServerConfig::io_threads, 1, 128, kImmutable));
  o.push_back(Bool("io-threads-do-reads", &ServerConfig::io_threads_do_reads, kImmutable));
  o.push_back(Bool("jemalloc-bg-thread", &ServerConfig::jemalloc_bg_thread, kMutable));
  // Without jemalloc (the sanitizer build) like a Redis built without its jemalloc: "yes" is
  // refused with Redis's message.
  Option defrag = Bool("activedefrag", &ServerConfig::activedefrag, kMutable);
  defrag.set = [plain_set = defrag.set](ServerConfig& c, const std::vector<std::string>& args) {
    if (std::string err = plain_set(c, args); !err.empty()) return err;
    if (c.activedefrag && !allocator::IsJemalloc()) {
      c.activedefrag = false;
      return std::string(
          "Active defragmentation cannot be enabled: it requires a Redis server compiled with a "
          "modified Jemalloc like the one shipped by default with the Redis source "
          "distribution");
    }
    return std::string();
  };
  o.push_back(std::move(defrag));
  o.push_back(Numeric("active-defrag-ignore-bytes", "", &ServerConfig::active_defrag_ignore_bytes,
                      1, kLongMax, kMutable, Type::kMemory));
  o.push_back(Numeric("active-defrag-threshold-lower", "",
                      &ServerConfig::active_defrag_threshold_lower, 0, 1000, kMutable));
  o.push_back(Numeric("active-defrag-threshold-upper", "",
                      &ServerConfig::active_defrag_threshold_upper, 0, 1000, kMutable));
  o.push_back(Numeric("active-defrag-cycle-min", "", &ServerConfig::active_defrag_cycle_min, 1, 99,
                      kMutable));
  o.push_back(Numeric("active-defrag-cycle-max", "", &ServerConfig::active_defrag_cycle_max, 1, 99,
                      kMutable));
  o.push_back(Numeric("active-defrag-max-scan-fields", "",
                      &ServerConfig::active_defrag_max_scan_fields, 1, kLongMax, kMutable));

  // Persistence and replication extras.
  o.push_back(Bool("replica-ignore-disk-write-errors",
                   &ServerConfig::replica_ignore_disk_write_errors, kMutable));
  o.push_back(Enum("propagation-error-behavior", &ServerConfig::propagation_error_behavior,
                   {"ignore", "panic", "panic-on-replicas"}, kMutable));

  // Redis's hidden knobs: only an exact CONFIG GET name shows them.
  std::vector<Option> hidden;
  hidden.push_back(Bool("use-exit-on-panic", &ServerConfig::use_exit_on_panic, kMutable));
  // aof-disable-auto-gc keeps the AOF history files after a rewrite (src/persistence/aof.cc).
  hidden.push_back(Bool("aof-disable-auto-gc", &ServerConfig::aof_disable_auto_gc, kMutable));
  hidden.push_back(
      Numeric("watchdog-period", "", &ServerConfig::watchdog_period, 0, kIntMax, kMutable));
  hidden.push_back(String("req-res-logfile", &ServerConfig::req_res_logfile, kImmutable, true));
  hidden.push_back(
      Numeric("client-default-resp", "", &ServerConfig::client_default_resp, 2, 3, kImmutable));
  for (Option& opt : hidden) {
    opt.hidden = true;
    o.push_back(std::move(opt));
  }
}

}  // namespace vireo
