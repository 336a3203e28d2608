// LOLWUT [VERSION v] [...]: computer art and the server version, as Redis has it since 5.
//
// Version 5 draws a homage to Georg Nees' "Schotter" (a grid of squares that grows more
// disordered row by row) in Braille characters, each one a 2x4 block of pixels; version 6
// draws a small night skyline. Other versions print only the version line. The drawing code
// is vireo's own; only the arguments, limits and the closing line follow Redis.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "commands/families.h"
#include "commands/helpers.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "server/client.h"
#include "server/command_context.h"
#include "server/info.h"

namespace vireo {
namespace {

// A 1-bit canvas; pixels outside it are ignored when drawn and read as off.
class Canvas {
 public:
  Canvas(int width, int height)
      : width_(width), height_(height), pixels_(static_cast<size_t>(width) * height, 0) {}
  int width() const { return width_; }
  int height() const { return height_; }
  void Set(int x, int y) {
    if (x >= 0 && y >= 0 && x < width_ && y < height_) pixels_[Index(x, y)] = 1;
  }
  bool Get(int x, int y) const {
    return x >= 0 && y >= 0 && x < width_ && y < height_ && pixels_[Index(x, y)] != 0;
  }
  // A straight segment by stepping along its longer axis.
  void Line(double x0, double y0, double x1, double y1) {
    const double steps = std::max({std::fabs(x1 - x0), std::fabs(y1 - y0), 1.0});
    for (int i = 0; i <= static_cast<int>(steps); ++i) {
      const double t = i / steps;
      Set(static_cast<int>(std::lround(x0 + (x1 - x0) * t)),
          static_cast<int>(std::lround(y0 + (y1 - y0) * t)));
    }
  }

  // Each Braille cell (U+2800 + dot bits) shows 2 columns by 4 rows of pixels; rows of cells
  // are separated by newlines.
  std::string RenderBraille() const {
    // Dot number for pixel (dx, dy) of a cell: the Unicode Braille bit layout.
    static constexpr int kBit[4][2] = {{0, 3}, {1, 4}, {2, 5}, {6, 7}};
    std::string out;
    for (int y = 0; y < height_; y += 4) {
      for (int x = 0; x < width_; x += 2) {
        int bits = 0;
        for (int dy = 0; dy < 4; ++dy) {
          for (int dx = 0; dx < 2; ++dx) {
            if (Get(x + dx, y + dy)) bits |= 1 << kBit[dy][dx];
          }
        }
        const int cp = 0x2800 + bits;  // three UTF-8 bytes
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      }
      if (y + 4 < height_) out.push_back('\n');
    }
    return out;
  }

 private:
  size_t Index(int x, int y) const { return static_cast<size_t>(y) * width_ + x; }
  int width_, height_;
  std::vector<uint8_t> pixels_;
};

// A small deterministic generator, so the same arguments draw the same picture.
class Lcg {
 public:
  // Uniform in [0, 1).
  double Next() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state_ >> 11) / static_cast<double>(1ULL << 53);
  }

 private:
  uint64_t state_ = 0x5eed1968;
};

std::string Schotter(int cols, int per_row, int per_col) {
  const int width = cols * 2;
  const int padding = width > 4 ? 2 : 0;
  const double side = static_cast<double>(width - padding * 2) / per_row;
  const int height = static_cast<int>(side * per_col) + padding * 2;
  Canvas canvas(width, height);
  Lcg rng;
  for (int row = 0; row < per_col; ++row) {
    // Disorder grows linearly down the sheet, as in the plot.
    const double chaos = static_cast<double>(row) / per_col;
    for (int col = 0; col < per_row; ++col) {
      const double cx = padding + side * col + side / 2 + (rng.Next() - 0.5) * side * chaos;
      const double cy = padding + side * row + side / 2 + (rng.Next() - 0.5) * side * chaos;
      const double angle = (rng.Next() - 0.5) * M_PI / 2 * chaos;
      const double r = side / 2;
      double px[4], py[4];
      for (int k = 0; k < 4; ++k) {
        const double a = angle + M_PI / 4 + k * M_PI / 2;
        px[k] = cx + r * std::sqrt(2.0) * std::cos(a);
        py[k] = cy + r * std::sqrt(2.0) * std::sin(a);
      }
      for (int k = 0; k < 4; ++k) canvas.Line(px[k], py[k], px[(k + 1) % 4], py[(k + 1) % 4]);
    }
  }
  return canvas.RenderBraille();
}

// Buildings of random heights under a starry sky, drawn with plain characters.
std::string Skyline(int cols, int rows) {
  Lcg rng;
  std::vector<std::string> grid(static_cast<size_t>(rows), std::string(cols, ' '));
  for (int x = 0; x < cols;) {
    const int w = 3 + static_cast<int>(rng.Next() * 6);
    const int h = 2 + static_cast<int>(rng.Next() * std::max(1, rows * 2 / 3));
    for (int dx = 0; dx < w && x + dx < cols; ++dx) {
      for (int y = std::max(0, rows - h); y < rows; ++y) {
        const bool edge = dx == 0 || dx == w - 1 || y == rows - h;
        grid[y][x + dx] = edge ? '#' : (rng.Next() < 0.3 ? 'o' : '.');
      }
    }
    x += w + (rng.Next() < 0.3 ? 1 : 0);
  }
  for (int y = 0; y < rows / 3; ++y) {
    for (int x = 0; x < cols; ++x) {
      if (grid[y][x] == ' ' && rng.Next() < 0.04) grid[y][x] = '*';
    }
  }
  std::string out;
  for (int y = 0; y < rows; ++y) {
    out += grid[y];
    if (y + 1 < rows) out.push_back('\n');
  }
  return out;
}

// Reads the optional integer arguments in order; false after replying an error.
bool ReadInts(ArgParser& args, std::initializer_list<int64_t*> outs) {
  for (int64_t* out : outs) {
    if (!args.HasNext()) break;
    *out = args.Int();
  }
  return args.Check();
}

void LolwutCommand(CommandContext& ctx) {
  ArgParser args(ctx, 1);
  std::string version(kRedisCompatVersion);
  if (ctx.argc() >= 3 && IsArg(ctx.arg(1), "VERSION")) {
    args.Next();
    const int64_t v = args.Int();
    if (!args.Check()) return;
    version = fmt::format("{}.0.0", static_cast<unsigned>(v));
  }
  // Redis picks by the version text: 4.9 and 5.x (not 5.9) draw version 5, 5.9 and 6.x version 6.
  const auto starts = [&](std::string_view prefix) { return version.rfind(prefix, 0) == 0; };
  const bool v5 = (starts("5.") && !starts("5.9")) || starts("4.9");
  const bool v6 = (starts("6.") && !starts("6.9")) || starts("5.9");
  std::string text;
  if (v5) {
    int64_t cols = 66, per_row = 8, per_col = 12;
    if (!ReadInts(args, {&cols, &per_row, &per_col})) return;
    text = Schotter(static_cast<int>(std::clamp<int64_t>(cols, 1, 1000)),
                    static_cast<int>(std::clamp<int64_t>(per_row, 1, 200)),
                    static_cast<int>(std::clamp<int64_t>(per_col, 1, 200)));
    text += "\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. ";
  } else if (v6) {
    int64_t cols = 80, rows = 20;
    if (!ReadInts(args, {&cols, &rows})) return;
    text = Skyline(static_cast<int>(std::clamp<int64_t>(cols, 1, 1000)),
                   static_cast<int>(std::clamp<int64_t>(rows, 1, 1000)));
    text += "\nA city at night, after the 8 bit games of the past. Redis ver. ";
  } else {
    text = "Redis ver. ";
  }
  text += kRedisCompatVersion;
  text += "\n";
  ctx.reply.Verbatim(text);
}

}  // namespace

void RegisterLolwutCommands(CommandTable& table) {
  table.Add({"lolwut", -1, kCmdReadonly | kCmdFast, Keys(), 0, "server", "5.0.0",
             "Displays computer art and the Redis version", "[VERSION version]", LolwutCommand,
             ""});
}

}  // namespace vireo
