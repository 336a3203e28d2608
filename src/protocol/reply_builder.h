// Writes RESP2 or RESP3 replies into a client's output buffer.
//
// Handlers call the semantic methods (Null, Map, Double...) and the builder picks the wire
// form for the client's protocol, so no command needs to know which protocol it speaks.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace vireo {

class ReplyBuilder {
 public:
  // Called for every error reply with its code ("ERR", "WRONGTYPE"...), for INFO errorstats.
  using ErrorHook = void (*)(void* ctx, std::string_view code);

  explicit ReplyBuilder(std::string* out) : out_(out) {}

  void set_resp3(bool resp3) { resp3_ = resp3; }
  bool resp3() const { return resp3_; }
  void set_error_hook(ErrorHook hook, void* ctx) {
    error_hook_ = hook;
    error_ctx_ = ctx;
  }
  std::string* buffer() { return out_; }
  void set_buffer(std::string* out) { out_ = out; }

  void SimpleString(std::string_view s);
  void Ok() { Raw("+OK\r\n"); }
  // `message` is the full text after '-', e.g. "ERR syntax error" or "WRONGTYPE ...".
  void Error(std::string_view message);
  // An error already counted in INFO errorstats (a script returning the error its command
  // replied): written without the hook.
  void ErrorUncounted(std::string_view message);
  void Integer(int64_t value);
  void Bulk(std::string_view s);
  void Null();       // RESP2 "$-1", RESP3 "_"
  void NullArray();  // RESP2 "*-1", RESP3 "_"
  void Array(size_t n) { Header('*', n); }
  void Map(size_t pairs);  // RESP2: an array of 2*pairs
  void Set(size_t n);      // RESP2: an array
  void Push(size_t n);     // RESP2: an array
  void EmptyArray() { Raw("*0\r\n"); }
  void Double(double value);  // RESP2: a bulk string
  // A double that RESP2 clients expect as a bulk string in Redis's long-double human form.
  void Bool(bool value);
  void Verbatim(std::string_view text, std::string_view format = "txt");  // RESP2: bulk
  void BigNumber(std::string_view digits);
  void Raw(std::string_view bytes) { out_->append(bytes); }

  // For replies whose length is known only at the end: reserve, write the elements, then fill.
  size_t DeferLength() { return out_->size(); }
  void SetDeferredArray(size_t mark, size_t n) { InsertHeader(mark, '*', n); }
  void SetDeferredMap(size_t mark, size_t pairs);
  void SetDeferredSet(size_t mark, size_t n) { InsertHeader(mark, resp3_ ? '~' : '*', n); }

 private:
  void Header(char type, size_t n);
  void InsertHeader(size_t mark, char type, size_t n);

  std::string* out_;
  bool resp3_ = false;
  ErrorHook error_hook_ = nullptr;
  void* error_ctx_ = nullptr;
};

}  // namespace vireo
