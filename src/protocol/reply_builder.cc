#include "protocol/reply_builder.h"

#include <cmath>

#include "util/strings.h"

namespace vireo {

void ReplyBuilder::Header(char type, size_t n) {
  char buf[32];
  buf[0] = type;
  size_t len = 1 + FormatInt64(static_cast<int64_t>(n), buf + 1);
  buf[len++] = '\r';
  buf[len++] = '\n';
  out_->append(buf, len);
}

void ReplyBuilder::InsertHeader(size_t mark, char type, size_t n) {
  char buf[32];
  buf[0] = type;
  size_t len = 1 + FormatInt64(static_cast<int64_t>(n), buf + 1);
  buf[len++] = '\r';
  buf[len++] = '\n';
  out_->insert(mark, buf, len);
}

void ReplyBuilder::SimpleString(std::string_view s) {
  out_->push_back('+');
  out_->append(s);
  out_->append("\r\n", 2);
}

void ReplyBuilder::ErrorUncounted(std::string_view message) {
  out_->push_back('-');
  // Error texts never contain newlines on the wire; a stray one would desync the client.
  for (char c : message) out_->push_back((c == '\r' || c == '\n') ? ' ' : c);
  out_->append("\r\n", 2);
}

void ReplyBuilder::Error(std::string_view message) {
  ErrorUncounted(message);
  if (error_hook_ != nullptr) {
    size_t space = message.find(' ');
    error_hook_(error_ctx_, message.substr(0, space));
  }
}

void ReplyBuilder::Integer(int64_t value) {
  char buf[32];
  buf[0] = ':';
  size_t len = 1 + FormatInt64(value, buf + 1);
  buf[len++] = '\r';
  buf[len++] = '\n';
  out_->append(buf, len);
}

void ReplyBuilder::Bulk(std::string_view s) {
  Header('$', s.size());
  out_->append(s);
  out_->append("\r\n", 2);
}

void ReplyBuilder::Null() { Raw(resp3_ ? "_\r\n" : "$-1\r\n"); }

void ReplyBuilder::NullArray() { Raw(resp3_ ? "_\r\n" : "*-1\r\n"); }

void ReplyBuilder::Map(size_t pairs) {
  if (resp3_) {
    Header('%', pairs);
  } else {
    Header('*', pairs * 2);
  }
}

void ReplyBuilder::SetDeferredMap(size_t mark, size_t pairs) {
  if (resp3_) {
    InsertHeader(mark, '%', pairs);
  } else {
    InsertHeader(mark, '*', pairs * 2);
  }
}

void ReplyBuilder::Set(size_t n) { Header(resp3_ ? '~' : '*', n); }

void ReplyBuilder::Push(size_t n) { Header(resp3_ ? '>' : '*', n); }

void ReplyBuilder::Double(double value) {
  std::string text = FormatDouble(value);
  if (resp3_) {
    out_->push_back(',');
    out_->append(text);
    out_->append("\r\n", 2);
  } else {
    Bulk(text);
  }
}

void ReplyBuilder::Bool(bool value) {
  if (resp3_) {
    Raw(value ? "#t\r\n" : "#f\r\n");
  } else {
    Raw(value ? ":1\r\n" : ":0\r\n");
  }
}

void ReplyBuilder::Verbatim(std::string_view text, std::string_view format) {
  if (!resp3_) {
    Bulk(text);
    return;
  }
  Header('=', text.size() + 4);
  out_->append(format.substr(0, 3));
  out_->push_back(':');
  out_->append(text);
  out_->append("\r\n", 2);
}

void ReplyBuilder::BigNumber(std::string_view digits) {
  if (!resp3_) {
    Bulk(digits);
    return;
  }
  out_->push_back('(');
  out_->append(digits);
  out_->append("\r\n", 2);
}

}  // namespace vireo
