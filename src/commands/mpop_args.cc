#include "commands/mpop_args.h"

namespace vireo {

MpopArgs ReadMpopArgs(ArgParser& args, std::string_view end_a, std::string_view end_b) {
  MpopArgs out;
  int64_t numkeys = args.Positive("ERR numkeys should be greater than 0");
  // The direction must follow the keys (checked without overflowing on a huge numkeys).
  if (args.ok() && static_cast<uint64_t>(numkeys) >= args.remaining()) {
    args.SyntaxError();
  }
  out.keys = args.Take(static_cast<size_t>(numkeys));
  out.second_end = args.Keyword({end_a, end_b}) == 1;
  bool seen_count = false;
  while (args.HasNext()) {
    if (!seen_count && args.OptionName("COUNT")) {
      out.count = args.Positive("ERR count should be greater than 0");
      seen_count = true;
    } else {
      args.SyntaxError();
    }
  }
  return out;
}

}  // namespace vireo
