// The Redis 7 cluster bus wire format (port + 10000): plain structs for every message type, an
// encoder and a validating decoder. Standalone (no Server, no sockets) so the bus engine, the
// link layer and the tests share one definition of the bytes.
//
// Every message is a fixed 2256-byte header followed by a type-specific body. Integers are in
// network byte order, except the MODULE message's module id, which Redis copies as an opaque
// 8-byte value (see ModuleBody). Strings (node names, IPs, hostnames) are fixed-size,
// zero-padded byte fields.
#ifndef VIREO_CLUSTER_BUS_MESSAGE_H_
#define VIREO_CLUSTER_BUS_MESSAGE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/key_slot.h"

namespace vireo::cluster {

// --- Sizes and offsets of the wire layout (Redis 7.0/7.2 src/cluster.h) ---
inline constexpr std::string_view kBusSignature = "RCmb";
inline constexpr uint16_t kBusProtocolVersion = 1;
inline constexpr size_t kNodeNameLen = 40;      // SHA-1 as 40 hex characters
inline constexpr size_t kBusIpLen = 46;         // INET6_ADDRSTRLEN, NUL-terminated on the wire
inline constexpr size_t kBusHeaderSize = 2256;  // every message has at least this many bytes
inline constexpr size_t kGossipEntrySize = 104;
inline constexpr size_t kPingExtHeaderSize = 8;  // length (4), type (2), padding (2)
inline constexpr size_t kSlotBitmapSize = kSlotCount / 8;
// Bytes a reader needs before it knows a message's length: signature and total length.
inline constexpr size_t kBusFramePrefix = 8;

// --- Message types (header "type") ---
enum class BusType : uint16_t {
  kPing = 0,
  kPong = 1,
  kMeet = 2,  // a PING that asks the receiver to add the sender
  kFail = 3,
  kPublish = 4,
  kFailoverAuthRequest = 5,
  kFailoverAuthAck = 6,
  kUpdate = 7,
  kMfStart = 8,
  kModule = 9,
  kPublishShard = 10,
};
// Types this codec (and Redis 7.2) knows; a larger value is an unknown type, which Redis accepts
// with whatever length it declares and then ignores.
inline constexpr uint16_t kBusTypeCount = 11;

// "ping", "pong", "auth-req", ... as Redis names them in logs and CLUSTER INFO's
// cluster_stats_messages_<name>_sent ("unknown" beyond the known types).
std::string_view BusTypeName(BusType type);

inline bool IsPingLike(BusType t) {
  return t == BusType::kPing || t == BusType::kPong || t == BusType::kMeet;
}

// --- Node flags (header "flags", gossip "flags"; CLUSTER NODES prints them) ---
inline constexpr uint16_t kNodeMaster = 1 << 0;
inline constexpr uint16_t kNodeSlave = 1 << 1;
inline constexpr uint16_t kNodePfail = 1 << 2;
inline constexpr uint16_t kNodeFail = 1 << 3;
inline constexpr uint16_t kNodeMyself = 1 << 4;
inline constexpr uint16_t kNodeHandshake = 1 << 5;
inline constexpr uint16_t kNodeNoAddr = 1 << 6;
inline constexpr uint16_t kNodeMeet = 1 << 7;
inline constexpr uint16_t kNodeMigrateTo = 1 << 8;
inline constexpr uint16_t kNodeNoFailover = 1 << 9;

// --- Message flags (header mflags[0]) ---
inline constexpr uint8_t kMsgFlagPaused = 1 << 0;    // master paused for a manual failover
inline constexpr uint8_t kMsgFlagForceAck = 1 << 1;  // vote even though the master is up
// The PING/PONG/MEET carries extensions. Derived, not stored: Encode sets it whenever there are
// extensions; Decode walks the extensions only when it is set (as Redis does) and then clears
// it from BusHeader::mflags, so Decode(Encode(m)) == m.
inline constexpr uint8_t kMsgFlagExtData = 1 << 2;

// --- Cluster state byte (header "state") ---
inline constexpr uint8_t kClusterStateOk = 0;
inline constexpr uint8_t kClusterStateFail = 1;

// --- PING extension types ---
enum class PingExtType : uint16_t {
  kHostname = 0,       // 7.0: cluster-announce-hostname
  kHumanNodename = 1,  // 7.2: cluster-announce-human-nodename
  kForgottenNode = 2,  // 7.2: CLUSTER FORGET spreads with a TTL
  kShardId = 3,        // 7.2: always sent by 7.2 nodes
};

// The 16384-slot bitmap: slot s is bit (s % 8) of byte s / 8.
using SlotBitmap = std::array<uint8_t, kSlotBitmapSize>;
inline bool SlotBit(const SlotBitmap& b, int slot) { return (b[slot >> 3] >> (slot & 7)) & 1; }
inline void SetSlotBit(SlotBitmap& b, int slot) { b[slot >> 3] |= uint8_t(1 << (slot & 7)); }
inline void ClearSlotBit(SlotBitmap& b, int slot) { b[slot >> 3] &= uint8_t(~(1 << (slot & 7))); }

// Name-like fields (node names, IPs) are fixed-size zero-padded byte arrays on the wire. In the
// structs they are std::strings without the padding: Decode stops at the first NUL, so an
// all-zero field (no master, IP not announced) is "". Encode writes at most the field's size
// (IPs: one less, keeping the terminating NUL Redis relies on) and zero-fills the rest.

// Everything in the header except what the encoder derives (signature, total length, version,
// type, gossip count, extension count).
struct BusHeader {
  uint16_t port = 0;  // clients' port (the TLS port when the bus runs over TLS)
  uint64_t current_epoch = 0;
  uint64_t config_epoch = 0;  // the master's config epoch when the sender is a replica
  uint64_t repl_offset = 0;
  std::string sender;  // 40-character node name
  SlotBitmap slots{};  // the slots the sender (or its master) serves
  std::string master;  // "slaveof": the master's name, "" when the sender is a master
  std::string ip;      // "myip": announced IP, "" to let the receiver use the peer address
  uint16_t pport = 0;  // the other clients' port (TCP when port is TLS, and vice versa)
  uint16_t cport = 0;  // bus port
  uint16_t flags = 0;  // kNode*: the sender's own flags, which Redis sends with kNodeMyself set
  uint8_t state = kClusterStateOk;
  std::array<uint8_t, 3> mflags{};  // mflags[0]: kMsgFlag*; the other two are unused

  bool operator==(const BusHeader&) const = default;
};

// One node in a PING/PONG/MEET gossip section.
struct GossipEntry {
  std::string name;
  uint32_t ping_sent = 0;      // seconds (Redis sends its millisecond clock / 1000)
  uint32_t pong_received = 0;  // seconds
  std::string ip;
  uint16_t port = 0;
  uint16_t cport = 0;
  uint16_t flags = 0;
  uint16_t pport = 0;

  bool operator==(const GossipEntry&) const = default;
};

// One PING extension. Which members are meaningful depends on type:
//   kHostname, kHumanNodename: text (sent NUL-terminated and zero-padded to 8 bytes)
//   kForgottenNode: name, ttl (seconds)
//   kShardId: name (the 40-character shard id)
//   any other type: raw, the payload after the 8-byte extension header, kept as received
struct PingExt {
  PingExtType type = PingExtType::kHostname;
  std::string text;
  std::string name;
  uint64_t ttl = 0;
  std::string raw;

  // Members in order: type, text, name, ttl, raw.
  static PingExt Hostname(std::string_view h) {
    return {PingExtType::kHostname, std::string(h), {}, 0, {}};
  }
  static PingExt HumanNodename(std::string_view n) {
    return {PingExtType::kHumanNodename, std::string(n), {}, 0, {}};
  }
  static PingExt ForgottenNode(std::string_view node_name, uint64_t ttl_seconds) {
    return {PingExtType::kForgottenNode, {}, std::string(node_name), ttl_seconds, {}};
  }
  static PingExt ShardId(std::string_view id) {
    return {PingExtType::kShardId, {}, std::string(id), 0, {}};
  }

  bool operator==(const PingExt&) const = default;
};

// PUBLISH and PUBLISHSHARD.
struct PublishBody {
  std::string channel;
  std::string message;

  bool operator==(const PublishBody&) const = default;
};

// UPDATE: the current slot configuration of some node (sent to a node advertising stale slots).
struct UpdateBody {
  uint64_t config_epoch = 0;
  std::string node;
  SlotBitmap slots{};

  bool operator==(const UpdateBody&) const = default;
};

// MODULE: a module-to-module message. Redis copies the module id as 8 raw bytes of the sender's
// memory (it is compared, never interpreted), so on the little-endian machines Redis runs on it
// is little-endian on the wire; this codec writes and reads it that way.
struct ModuleBody {
  uint64_t module_id = 0;
  uint8_t type = 0;
  std::string payload;

  bool operator==(const ModuleBody&) const = default;
};

// A whole message. `type` selects which body member Encode writes and Decode fills; the others
// stay empty. FAILOVER_AUTH_REQUEST, FAILOVER_AUTH_ACK and MFSTART are header only.
struct BusMessage {
  BusType type = BusType::kPing;
  BusHeader header;
  std::vector<GossipEntry> gossip;  // PING, PONG, MEET
  std::vector<PingExt> extensions;  // PING, PONG, MEET, in wire order
  std::string fail_node;            // FAIL: the node now considered failing
  PublishBody publish;              // PUBLISH, PUBLISHSHARD
  UpdateBody update;                // UPDATE
  ModuleBody module;                // MODULE
  std::string unknown_body;         // a type >= kBusTypeCount: the bytes after the header

  // The first extension of the given type, or nullptr.
  const PingExt* FindExt(PingExtType type) const;

  bool operator==(const BusMessage&) const = default;
};

// The wire bytes of `msg`. The gossip count, extension count, total length and (when there
// are extensions) kMsgFlagExtData are derived from the struct. The wire counts are 16-bit and
// the lengths 32-bit: callers keep to at most 65535 gossip entries and extensions (Redis sends
// a tenth of the cluster, at least 3) and PUBLISH/MODULE data under 4 GB.
std::string Encode(const BusMessage& msg);

// Parses one whole message (exactly the bytes its total length declares) into *msg. Validates
// as Redis does before acting on a message: signature, version, declared length against the
// bytes given and against what the type's fields imply (gossip count, the extension chain,
// PUBLISH and MODULE lengths). Never reads outside `bytes`. On failure returns false with a
// one-line reason in *error and leaves *msg unspecified. Redis ignores such a message and keeps
// the link; only a bad frame prefix (see PeekBusFrame) makes it drop the link.
bool Decode(std::string_view bytes, BusMessage* msg, std::string* error);

// Framing, as Redis reads the bus: first the 8-byte prefix (signature and total length), then
// the rest of the message.
struct BusFrame {
  // The bad prefix: wrong signature or a total length below kBusHeaderSize. Redis logs
  // "Bad message length or signature received on the Cluster bus" and closes the link.
  bool bad = false;
  // Total bytes of the next message: kBusFramePrefix while fewer are buffered, then the
  // declared total length.
  size_t length = kBusFramePrefix;
  // The next message is wholly buffered (buffered.size() >= length).
  bool complete = false;
};
BusFrame PeekBusFrame(std::string_view buffered);

}  // namespace vireo::cluster

#endif  // VIREO_CLUSTER_BUS_MESSAGE_H_
