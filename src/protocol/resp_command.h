// A command encoded as a RESP multibulk of bulk strings, the way a client sends it: for the
// links the server opens itself (a replica to its master), the replication stream and tests.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

namespace vireo {

template <typename Args>
void AppendRespCommand(std::string* out, const Args& args) {
  out->push_back('*');
  out->append(std::to_string(args.size()));
  out->append("\r\n");
  for (const auto& arg : args) {
    std::string_view a(arg.data(), arg.size());
    out->push_back('$');
    out->append(std::to_string(a.size()));
    out->append("\r\n");
    out->append(a);
    out->append("\r\n");
  }
}

template <typename Args>
std::string RespCommand(const Args& args) {
  std::string out;
  AppendRespCommand(&out, args);
  return out;
}

inline std::string RespCommand(std::initializer_list<std::string_view> args) {
  return RespCommand<std::initializer_list<std::string_view>>(args);
}

}  // namespace vireo
