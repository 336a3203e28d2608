#include "cluster/bus_message.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace vireo::cluster {

namespace {

// Header field offsets (Redis static_asserts them in cluster.h so mixed versions interoperate).
constexpr size_t kOffTotalLen = 4;
constexpr size_t kOffVersion = 8;
constexpr size_t kOffPort = 10;
constexpr size_t kOffType = 12;
constexpr size_t kOffCount = 14;
constexpr size_t kOffCurrentEpoch = 16;
constexpr size_t kOffConfigEpoch = 24;
constexpr size_t kOffReplOffset = 32;
constexpr size_t kOffSender = 40;
constexpr size_t kOffSlots = 80;
constexpr size_t kOffMaster = 2128;
constexpr size_t kOffIp = 2168;
constexpr size_t kOffExtensions = 2214;
constexpr size_t kOffPport = 2246;  // 2216..2245: 30 reserved bytes, zero
constexpr size_t kOffCport = 2248;
constexpr size_t kOffFlags = 2250;
constexpr size_t kOffState = 2252;
constexpr size_t kOffMflags = 2253;
static_assert(kOffMflags + 3 == kBusHeaderSize);
static_assert(kOffSlots + kSlotBitmapSize == kOffMaster);

// Gossip entry offsets.
constexpr size_t kGossipPingSent = 40;
constexpr size_t kGossipPongReceived = 44;
constexpr size_t kGossipIp = 48;
constexpr size_t kGossipPort = 94;
constexpr size_t kGossipCport = 96;
constexpr size_t kGossipFlags = 98;
constexpr size_t kGossipPport = 100;  // then 2 unused bytes
static_assert(kGossipPport + 4 == kGossipEntrySize);

// Fixed body sizes: the bytes before the variable-length data.
constexpr size_t kFailBodySize = kNodeNameLen;
constexpr size_t kPublishFixedSize = 8;  // channel length, message length
constexpr size_t kUpdateBodySize = 8 + kNodeNameLen + kSlotBitmapSize;
constexpr size_t kModuleFixedSize = 13;  // module id (8), payload length (4), type (1)
constexpr size_t kForgottenNodeSize = kNodeNameLen + 8;

size_t AlignTo8(size_t n) { return (n + 7) & ~size_t{7}; }

// Big-endian stores into a buffer already sized for the message.
void Put16(std::string& out, size_t at, uint16_t v) {
  out[at] = char(v >> 8);
  out[at + 1] = char(v);
}
void Put32(std::string& out, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) out[at + i] = char(v >> (24 - 8 * i));
}
void Put64(std::string& out, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[at + i] = char(v >> (56 - 8 * i));
}
// A fixed-size zero-padded field; `max` is the most bytes of `s` it may take.
void PutField(std::string& out, size_t at, std::string_view s, size_t max) {
  s = s.substr(0, max);
  std::memcpy(out.data() + at, s.data(), s.size());
}
void PutBytes(std::string& out, size_t at, std::string_view s) {
  std::memcpy(out.data() + at, s.data(), s.size());
}

// Big-endian loads. Callers check bounds first: each decoder validates the total size it is
// about to read before reading any field of it.
uint16_t Get16(std::string_view in, size_t at) {
  return uint16_t((uint8_t(in[at]) << 8) | uint8_t(in[at + 1]));
}
uint32_t Get32(std::string_view in, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | uint8_t(in[at + i]);
  return v;
}
uint64_t Get64(std::string_view in, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | uint8_t(in[at + i]);
  return v;
}
// A zero-padded field up to its first NUL.
std::string GetField(std::string_view in, size_t at, size_t size) {
  std::string_view f = in.substr(at, size);
  return std::string(f.substr(0, f.find('\0')));
}

void PutSlots(std::string& out, size_t at, const SlotBitmap& slots) {
  std::memcpy(out.data() + at, slots.data(), slots.size());
}
void GetSlots(std::string_view in, size_t at, SlotBitmap* slots) {
  std::memcpy(slots->data(), in.data() + at, slots->size());
}

// Wire size of one extension, header included, padded as Redis pads: text extensions carry
// their terminating NUL, and every extension is a multiple of 8 bytes.
size_t ExtWireSize(const PingExt& ext) {
  switch (ext.type) {
    case PingExtType::kHostname:
    case PingExtType::kHumanNodename:
      return kPingExtHeaderSize + AlignTo8(ext.text.size() + 1);
    case PingExtType::kForgottenNode:
      return kPingExtHeaderSize + AlignTo8(kForgottenNodeSize);
    case PingExtType::kShardId:
      return kPingExtHeaderSize + AlignTo8(kNodeNameLen);
  }
  return kPingExtHeaderSize + AlignTo8(ext.raw.size());
}

void PutExt(std::string& out, size_t at, const PingExt& ext, size_t size) {
  Put32(out, at, uint32_t(size));
  Put16(out, at + 4, uint16_t(ext.type));
  size_t data = at + kPingExtHeaderSize;
  switch (ext.type) {
    case PingExtType::kHostname:
    case PingExtType::kHumanNodename:
      PutBytes(out, data, ext.text);
      return;
    case PingExtType::kForgottenNode:
      PutField(out, data, ext.name, kNodeNameLen);
      Put64(out, data + kNodeNameLen, ext.ttl);
      return;
    case PingExtType::kShardId:
      PutField(out, data, ext.name, kNodeNameLen);
      return;
  }
  PutBytes(out, data, ext.raw);
}

// Parses the extension whose bytes (header included, already bounds-checked) are `ext`.
bool ParseExt(std::string_view ext, PingExt* out, std::string* error) {
  out->type = PingExtType(Get16(ext, 4));
  std::string_view data = ext.substr(kPingExtHeaderSize);
  switch (out->type) {
    case PingExtType::kHostname:
    case PingExtType::kHumanNodename:
      // Redis reads the text as a C string; stopping at the extension's end keeps an
      // unterminated one inside the message.
      out->text = std::string(data.substr(0, data.find('\0')));
      return true;
    case PingExtType::kForgottenNode:
      if (data.size() < kForgottenNodeSize) {
        *error = fmt::format("forgotten-node extension of {} bytes is too short", ext.size());
        return false;
      }
      out->name = GetField(data, 0, kNodeNameLen);
      out->ttl = Get64(data, kNodeNameLen);
      return true;
    case PingExtType::kShardId:
      if (data.size() < kNodeNameLen) {
        *error = fmt::format("shard-id extension of {} bytes is too short", ext.size());
        return false;
      }
      out->name = GetField(data, 0, kNodeNameLen);
      return true;
  }
  // Unknown extension types are skipped by Redis (with a log line); keep them for the caller.
  out->raw = std::string(data);
  return true;
}

size_t PingBodySize(const BusMessage& msg) {
  size_t size = msg.gossip.size() * kGossipEntrySize;
  for (const PingExt& ext : msg.extensions) size += ExtWireSize(ext);
  return size;
}

size_t BodySize(const BusMessage& msg) {
  switch (msg.type) {
    case BusType::kPing:
    case BusType::kPong:
    case BusType::kMeet:
      return PingBodySize(msg);
    case BusType::kFail:
      return kFailBodySize;
    case BusType::kPublish:
    case BusType::kPublishShard:
      return kPublishFixedSize + msg.publish.channel.size() + msg.publish.message.size();
    case BusType::kFailoverAuthRequest:
    case BusType::kFailoverAuthAck:
    case BusType::kMfStart:
      return 0;
    case BusType::kUpdate:
      return kUpdateBodySize;
    case BusType::kModule:
      return kModuleFixedSize + msg.module.payload.size();
  }
  return msg.unknown_body.size();
}

void PutHeader(std::string& out, const BusMessage& msg) {
  const BusHeader& h = msg.header;
  PutBytes(out, 0, kBusSignature);
  Put32(out, kOffTotalLen, uint32_t(out.size()));
  Put16(out, kOffVersion, kBusProtocolVersion);
  Put16(out, kOffPort, h.port);
  Put16(out, kOffType, uint16_t(msg.type));
  Put64(out, kOffCurrentEpoch, h.current_epoch);
  Put64(out, kOffConfigEpoch, h.config_epoch);
  Put64(out, kOffReplOffset, h.repl_offset);
  PutField(out, kOffSender, h.sender, kNodeNameLen);
  PutSlots(out, kOffSlots, h.slots);
  PutField(out, kOffMaster, h.master, kNodeNameLen);
  PutField(out, kOffIp, h.ip, kBusIpLen - 1);
  Put16(out, kOffPport, h.pport);
  Put16(out, kOffCport, h.cport);
  Put16(out, kOffFlags, h.flags);
  out[kOffState] = char(h.state);
  for (size_t i = 0; i < h.mflags.size(); ++i) out[kOffMflags + i] = char(h.mflags[i]);
  if (IsPingLike(msg.type)) {
    Put16(out, kOffCount, uint16_t(msg.gossip.size()));
    Put16(out, kOffExtensions, uint16_t(msg.extensions.size()));
    if (!msg.extensions.empty()) out[kOffMflags] = char(h.mflags[0] | kMsgFlagExtData);
  }
}

void PutGossip(std::string& out, size_t at, const GossipEntry& g) {
  PutField(out, at, g.name, kNodeNameLen);
  Put32(out, at + kGossipPingSent, g.ping_sent);
  Put32(out, at + kGossipPongReceived, g.pong_received);
  PutField(out, at + kGossipIp, g.ip, kBusIpLen - 1);
  Put16(out, at + kGossipPort, g.port);
  Put16(out, at + kGossipCport, g.cport);
  Put16(out, at + kGossipFlags, g.flags);
  Put16(out, at + kGossipPport, g.pport);
}

GossipEntry GetGossip(std::string_view in, size_t at) {
  GossipEntry g;
  g.name = GetField(in, at, kNodeNameLen);
  g.ping_sent = Get32(in, at + kGossipPingSent);
  g.pong_received = Get32(in, at + kGossipPongReceived);
  g.ip = GetField(in, at + kGossipIp, kBusIpLen);
  g.port = Get16(in, at + kGossipPort);
  g.cport = Get16(in, at + kGossipCport);
  g.flags = Get16(in, at + kGossipFlags);
  g.pport = Get16(in, at + kGossipPport);
  return g;
}

uint64_t GetLittle64(std::string_view in, size_t at) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | uint8_t(in[at + i]);
  return v;
}
void PutLittle64(std::string& out, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[at + i] = char(v >> (8 * i));
}

// The body decoders get the whole message, its length already checked to be at least
// kBusHeaderSize and equal to the declared total length.

bool DecodePing(std::string_view in, BusMessage* msg, std::string* error) {
  const uint16_t count = Get16(in, kOffCount);
  const size_t gossip_end = kBusHeaderSize + size_t{count} * kGossipEntrySize;
  if (gossip_end > in.size()) {
    *error = fmt::format("{} of {} bytes is too short for {} gossip entries",
                         BusTypeName(msg->type), in.size(), count);
    return false;
  }
  msg->gossip.reserve(count);
  for (size_t at = kBusHeaderSize; at < gossip_end; at += kGossipEntrySize) {
    msg->gossip.push_back(GetGossip(in, at));
  }
  // Redis walks the extension chain only when the flag says there is one; a count without the
  // flag is not data (and then the length must end at the gossip section).
  size_t pos = gossip_end;
  if (msg->header.mflags[0] & kMsgFlagExtData) {
    const uint16_t extensions = Get16(in, kOffExtensions);
    for (uint16_t i = 0; i < extensions; ++i) {
      if (in.size() - pos < kPingExtHeaderSize) {
        *error =
            fmt::format("{} extension {} starts beyond the message end", BusTypeName(msg->type), i);
        return false;
      }
      const uint32_t len = Get32(in, pos);
      if (len % 8 != 0 || len < kPingExtHeaderSize) {
        *error = fmt::format("{} extension {} has a bad length {} (not padded to 8 bytes)",
                             BusTypeName(msg->type), i, len);
        return false;
      }
      if (len > in.size() - pos) {
        *error = fmt::format("{} extension {} of {} bytes exceeds the message length {}",
                             BusTypeName(msg->type), i, len, in.size());
        return false;
      }
      PingExt ext;
      if (!ParseExt(in.substr(pos, len), &ext, error)) return false;
      msg->extensions.push_back(std::move(ext));
      pos += len;
    }
  }
  if (pos != in.size()) {
    *error = fmt::format("{} of {} bytes but its gossip and extensions take {}",
                         BusTypeName(msg->type), in.size(), pos);
    return false;
  }
  return true;
}

bool ExpectLength(std::string_view in, uint64_t expected, BusType type, std::string* error) {
  if (in.size() == expected) return true;
  *error = fmt::format("{} of {} bytes, expected {}", BusTypeName(type), in.size(), expected);
  return false;
}

bool DecodeBody(std::string_view in, BusMessage* msg, std::string* error) {
  const size_t body = kBusHeaderSize;
  switch (msg->type) {
    case BusType::kPing:
    case BusType::kPong:
    case BusType::kMeet:
      return DecodePing(in, msg, error);
    case BusType::kFail:
      if (!ExpectLength(in, body + kFailBodySize, msg->type, error)) return false;
      msg->fail_node = GetField(in, body, kNodeNameLen);
      return true;
    case BusType::kPublish:
    case BusType::kPublishShard: {
      if (in.size() < body + kPublishFixedSize) {
        *error = fmt::format("{} of {} bytes is too short", BusTypeName(msg->type), in.size());
        return false;
      }
      // 64-bit sum: two 32-bit lengths must not wrap around to match the total.
      const uint64_t channel_len = Get32(in, body);
      const uint64_t message_len = Get32(in, body + 4);
      if (!ExpectLength(in, body + kPublishFixedSize + channel_len + message_len, msg->type,
                        error)) {
        return false;
      }
      const size_t data = body + kPublishFixedSize;
      msg->publish.channel = std::string(in.substr(data, channel_len));
      msg->publish.message = std::string(in.substr(data + channel_len, message_len));
      return true;
    }
    case BusType::kFailoverAuthRequest:
    case BusType::kFailoverAuthAck:
    case BusType::kMfStart:
      return ExpectLength(in, body, msg->type, error);
    case BusType::kUpdate:
      if (!ExpectLength(in, body + kUpdateBodySize, msg->type, error)) return false;
      msg->update.config_epoch = Get64(in, body);
      msg->update.node = GetField(in, body + 8, kNodeNameLen);
      GetSlots(in, body + 8 + kNodeNameLen, &msg->update.slots);
      return true;
    case BusType::kModule: {
      if (in.size() < body + kModuleFixedSize) {
        *error = fmt::format("MODULE of {} bytes is too short", in.size());
        return false;
      }
      const uint64_t len = Get32(in, body + 8);
      if (!ExpectLength(in, body + kModuleFixedSize + len, msg->type, error)) return false;
      msg->module.module_id = GetLittle64(in, body);
      msg->module.type = uint8_t(in[body + 12]);
      msg->module.payload = std::string(in.substr(body + kModuleFixedSize));
      return true;
    }
  }
  // Unknown types: Redis trusts the declared length and ignores the message.
  msg->unknown_body = std::string(in.substr(body));
  return true;
}

}  // namespace

std::string_view BusTypeName(BusType type) {
  switch (type) {
    case BusType::kPing:
      return "ping";
    case BusType::kPong:
      return "pong";
    case BusType::kMeet:
      return "meet";
    case BusType::kFail:
      return "fail";
    case BusType::kPublish:
      return "publish";
    case BusType::kFailoverAuthRequest:
      return "auth-req";
    case BusType::kFailoverAuthAck:
      return "auth-ack";
    case BusType::kUpdate:
      return "update";
    case BusType::kMfStart:
      return "mfstart";
    case BusType::kModule:
      return "module";
    case BusType::kPublishShard:
      return "publishshard";
  }
  return "unknown";
}

const PingExt* BusMessage::FindExt(PingExtType ext_type) const {
  auto it = std::find_if(extensions.begin(), extensions.end(),
                         [&](const PingExt& e) { return e.type == ext_type; });
  return it == extensions.end() ? nullptr : &*it;
}

std::string Encode(const BusMessage& msg) {
  std::string out(kBusHeaderSize + BodySize(msg), '\0');
  PutHeader(out, msg);
  size_t at = kBusHeaderSize;
  switch (msg.type) {
    case BusType::kPing:
    case BusType::kPong:
    case BusType::kMeet:
      for (const GossipEntry& g : msg.gossip) {
        PutGossip(out, at, g);
        at += kGossipEntrySize;
      }
      for (const PingExt& ext : msg.extensions) {
        const size_t size = ExtWireSize(ext);
        PutExt(out, at, ext, size);
        at += size;
      }
      break;
    case BusType::kFail:
      PutField(out, at, msg.fail_node, kNodeNameLen);
      break;
    case BusType::kPublish:
    case BusType::kPublishShard:
      Put32(out, at, uint32_t(msg.publish.channel.size()));
      Put32(out, at + 4, uint32_t(msg.publish.message.size()));
      PutBytes(out, at + kPublishFixedSize, msg.publish.channel);
      PutBytes(out, at + kPublishFixedSize + msg.publish.channel.size(), msg.publish.message);
      break;
    case BusType::kFailoverAuthRequest:
    case BusType::kFailoverAuthAck:
    case BusType::kMfStart:
      break;
    case BusType::kUpdate:
      Put64(out, at, msg.update.config_epoch);
      PutField(out, at + 8, msg.update.node, kNodeNameLen);
      PutSlots(out, at + 8 + kNodeNameLen, msg.update.slots);
      break;
    case BusType::kModule:
      PutLittle64(out, at, msg.module.module_id);
      Put32(out, at + 8, uint32_t(msg.module.payload.size()));
      out[at + 12] = char(msg.module.type);
      PutBytes(out, at + kModuleFixedSize, msg.module.payload);
      break;
    default:
      PutBytes(out, at, msg.unknown_body);
      break;
  }
  return out;
}

BusFrame PeekBusFrame(std::string_view buffered) {
  BusFrame frame;
  if (buffered.size() < kBusFramePrefix) return frame;
  const uint32_t total = Get32(buffered, kOffTotalLen);
  if (buffered.substr(0, 4) != kBusSignature || total < kBusHeaderSize) {
    frame.bad = true;
    return frame;
  }
  frame.length = total;
  frame.complete = buffered.size() >= total;
  return frame;
}

bool Decode(std::string_view bytes, BusMessage* msg, std::string* error) {
  if (bytes.size() < kBusHeaderSize) {
    *error = fmt::format("message of {} bytes is shorter than the {}-byte header", bytes.size(),
                         kBusHeaderSize);
    return false;
  }
  if (bytes.substr(0, 4) != kBusSignature) {
    *error = "bad signature (not RCmb)";
    return false;
  }
  const uint32_t total = Get32(bytes, kOffTotalLen);
  if (total != bytes.size()) {
    *error = fmt::format("declared length {} but {} bytes received", total, bytes.size());
    return false;
  }
  const uint16_t version = Get16(bytes, kOffVersion);
  if (version != kBusProtocolVersion) {
    *error = fmt::format("unsupported bus protocol version {}", version);
    return false;
  }
  *msg = BusMessage{};
  msg->type = BusType(Get16(bytes, kOffType));
  BusHeader& h = msg->header;
  h.port = Get16(bytes, kOffPort);
  h.current_epoch = Get64(bytes, kOffCurrentEpoch);
  h.config_epoch = Get64(bytes, kOffConfigEpoch);
  h.repl_offset = Get64(bytes, kOffReplOffset);
  h.sender = GetField(bytes, kOffSender, kNodeNameLen);
  GetSlots(bytes, kOffSlots, &h.slots);
  h.master = GetField(bytes, kOffMaster, kNodeNameLen);
  h.ip = GetField(bytes, kOffIp, kBusIpLen);
  h.pport = Get16(bytes, kOffPport);
  h.cport = Get16(bytes, kOffCport);
  h.flags = Get16(bytes, kOffFlags);
  h.state = uint8_t(bytes[kOffState]);
  for (size_t i = 0; i < h.mflags.size(); ++i) h.mflags[i] = uint8_t(bytes[kOffMflags + i]);
  if (!DecodeBody(bytes, msg, error)) return false;
  h.mflags[0] &= uint8_t(~kMsgFlagExtData);  // derived from `extensions` (see the header)
  return true;
}

}  // namespace vireo::cluster
