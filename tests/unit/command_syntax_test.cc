// ParseCommandSyntax: the declaration mini-language COMMAND DOCS argument trees come from,
// including the annotations (name=, :type, 'token', #n) that give Redis's exact trees.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/command_table.h"

namespace vireo {
namespace {

// "name:type[token]{flags}(children)", one line per tree, to compare trees at a glance.
std::string Render(const std::vector<CommandArg>& args) {
  std::string out;
  for (const CommandArg& a : args) {
    if (!out.empty()) out += " ";
    out += a.name + ":" + a.type;
    if (!a.display_text.empty()) out += "'" + a.display_text + "'";
    if (a.key_spec_index >= 0) out += "#" + std::to_string(a.key_spec_index);
    if (!a.token.empty() || a.type == "pure-token") out += "[" + a.token + "]";
    if (a.optional || a.multiple || a.multiple_token) {
      out += "{";
      if (a.optional) out += "o";
      if (a.multiple) out += "m";
      if (a.multiple_token) out += "t";
      out += "}";
    }
    if (!a.subargs.empty()) out += "(" + Render(a.subargs) + ")";
  }
  return out;
}

std::string Parse(const char* syntax) { return Render(ParseCommandSyntax(syntax)); }

TEST(CommandSyntax, PlainDocumentationSyntax) {
  EXPECT_EQ(Parse("key value [NX | XX] [GET]"),
            "key:key value:string condition:oneof{o}(nx:pure-token[NX] xx:pure-token[XX]) "
            "get:pure-token[GET]{o}");
  EXPECT_EQ(Parse("key [key ...] timeout"), "key:key{m} timeout:double");
  EXPECT_EQ(Parse("key [GET pattern [GET pattern ...]]"), "key:key pattern:pattern[GET]{omt}");
  EXPECT_EQ(Parse("key min max [LIMIT offset count]"),
            "key:key min:string max:string limit:block[LIMIT]{o}(offset:integer count:integer)");
}

TEST(CommandSyntax, NamesTypesAndDisplayText) {
  EXPECT_EQ(Parse("source destination wherefrom=<LEFT | RIGHT>"),
            "source:key destination:key wherefrom:oneof(left:pure-token[LEFT] "
            "right:pure-token[RIGHT])");
  EXPECT_EQ(Parse("key increment:integer ID:string ..."), "key:key increment:integer ID:string{m}");
  EXPECT_EQ(Parse("[change=CH] [BCAST=BCAST]"),
            "change:pure-token[CH]{o} BCAST:pure-token[BCAST]{o}");
  // On a value the label is the name and the word written is the display text.
  EXPECT_EQ(Parse("[STORE storekey=key] [ENTRIESREAD entriesread=entries-read:integer]"),
            "storekey:key'key'[STORE]{o} entriesread:integer'entries-read'[ENTRIESREAD]{o}");
  EXPECT_EQ(Parse("old-format=ip:port"), "old-format:string'ip:port'");
  EXPECT_EQ(Parse("data=<field value> ..."), "data:block{m}(field:string value:string)");
}

TEST(CommandSyntax, QuotedTokensAndSymbols) {
  EXPECT_EQ(Parse("unit=<'m' | 'km'>"), "unit:oneof(m:pure-token[m] km:pure-token[km])");
  EXPECT_EQ(Parse("[operator=<equal== | approximately=~>] id-selector=<auto-id=* | id>"),
            "operator:oneof{o}(equal:pure-token[=] approximately:pure-token[~]) "
            "id-selector:oneof(auto-id:pure-token[*] id:string)");
  EXPECT_EQ(Parse("<key | empty-string=''>"),
            "key-empty-string:oneof(key:key empty-string:pure-token[])");
}

TEST(CommandSyntax, TokenBindingAndKeySpecIndex) {
  // A token-led group with several values is a block carrying the token; "<TOKEN value>"
  // binds the token to the value instead.
  EXPECT_EQ(Parse("circle=<<BYRADIUS radius> unit=<M | KM>>"),
            "circle:block(radius:double[BYRADIUS] unit:oneof(m:pure-token[M] km:pure-token[KM]))");
  EXPECT_EQ(Parse("key [BY by-pattern=pattern#1] [STORE destination]"),
            "key:key by-pattern:pattern'pattern'#1[BY]{o} destination:key[STORE]{o}");
  // A named token stays a pure token: neither bound to the next value nor a block's token
  // (ZMOVE's "score-range" block holds a BYSCORE pure token and two doubles).
  EXPECT_EQ(Parse("<MIN | range=<byscore=BYSCORE lo:double hi:double>>"),
            "min-range:oneof(min:pure-token[MIN] range:block(byscore:pure-token[BYSCORE] "
            "lo:double hi:double))");
}

}  // namespace
}  // namespace vireo
