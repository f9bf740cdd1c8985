// Golden MCP transcripts (docs/conventions.md §11): each testdata/mcp/*.transcript file is a
// session replayed against a real Server in inline mode (zero workers, so the output order is
// fixed).
// Lines starting with ">" are sent; lines starting with "<" are the expected output, in order;
// indented lines continue the message above; "#" lines are comments. Values of "timestamp" and
// the 8-hex-digit error references are volatile and compared as placeholders.
//
// To regenerate after an intended change: `mcp_test --gtest_filter='Transcript*' --update`,
// then review the diff of testdata/mcp/ and commit it with the change that caused it.
#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "mcp/describe.h"
#include "mcp/testing/test_client.h"

namespace trove::mcp {
namespace {

using testing::RecordingChannel;
using testing::TestServer;

bool g_update = false;  // set once by main, before any test runs

struct EchoArgs {
  std::string text;
};
auto DescribeFields(Tag<EchoArgs>) {
  return Fields(Field("text", &EchoArgs::text, "Text to echo back", MaxLength{100}));
}
constexpr std::string_view kDepths[] = {"L0", "L1", "L2", "L3"};
struct ListArgs {
  std::string depth;
  std::optional<std::int64_t> limit;
};
auto DescribeFields(Tag<ListArgs>) {
  return Fields(Field("depth", &ListArgs::depth, "Depth level", OneOf{kDepths}),
                Field("limit", &ListArgs::limit, "Page size", InRange(1, 1000)));
}

void Register(Server& server) {
  Status s = server.tools().Add<EchoArgs, EchoArgs>(
      {.name = "echo",
       .description = "Echoes its text",
       .annotations = {.read_only = true, .idempotent = true, .open_world = false}},
      [](const EchoArgs& a, CallContext&) -> Result<EchoArgs> { return a; });
  ASSERT_TRUE(s.ok()) << s.ToString();
  s = server.tools().AddWithContent<ListArgs>(
      {.name = "list_things", .description = "Lists things at a depth"},
      [](const ListArgs& a, CallContext&) -> Result<ToolResult> {
        if (a.depth == "L3") return Status::NotFound("no things at depth L3");
        return ToolResult::Text("things at " + a.depth);
      });
  ASSERT_TRUE(s.ok()) << s.ToString();
}

// Replaces volatile values so a transcript compares stably.
Json Normalize(Json j) {
  static const std::regex kRef("\\(ref [0-9a-f]{8}\\)");
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() == "timestamp" && it.value().is_string()) {
        it.value() = "<timestamp>";
      } else {
        it.value() = Normalize(it.value());
      }
    }
  } else if (j.is_array()) {
    for (auto& v : j) v = Normalize(v);
  } else if (j.is_string()) {
    j = std::regex_replace(j.get<std::string>(), kRef, "(ref <ref>)");
  }
  return j;
}

struct Entry {
  char dir;  // '>' or '<'
  std::string text;
};

std::vector<Entry> ReadTranscript(const std::string& path, std::vector<std::string>* header) {
  std::ifstream in(path);
  std::vector<Entry> out;
  std::string line;
  bool in_header = true;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (line[0] == '#') {
      if (in_header) header->push_back(line);
      continue;
    }
    in_header = false;
    if (line[0] == '>' || line[0] == '<') {
      out.push_back({line[0], line.substr(1)});
    } else if (!out.empty()) {
      out.back().text += line;  // a continuation line
    }
  }
  return out;
}

std::vector<std::string> TranscriptFiles() {
  std::vector<std::string> files;
  const std::string dir = std::string(TROVE_SOURCE_DIR) + "/testdata/mcp";
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name.size() > 11 && name.substr(name.size() - 11) == ".transcript") {
        files.push_back(dir + "/" + name);
      }
    }
    closedir(d);
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(TranscriptTest, EveryTranscriptReplays) {
  std::vector<std::string> files = TranscriptFiles();
  ASSERT_FALSE(files.empty()) << "no transcripts under testdata/mcp";
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    std::vector<std::string> header;
    std::vector<Entry> entries = ReadTranscript(path, &header);
    TestServer ts(0);
    Register(ts.server());
    auto session = ts.server().NewSession("");
    auto channel = std::make_shared<RecordingChannel>();

    std::vector<std::string> actual;  // normalized output, one line per message
    std::ostringstream rewritten;
    for (const auto& h : header) rewritten << h << "\n";
    std::size_t expected_index = 0;
    std::vector<std::string> expected;
    for (const Entry& e : entries) {
      if (e.dir == '<') expected.push_back(Dump(Normalize(ParseJson(e.text))));
    }
    for (const Entry& e : entries) {
      if (e.dir != '>') continue;
      rewritten << ">" << e.text << "\n";
      const std::size_t before = channel->Messages().size();
      ParsedMessage parsed = ParseMessage(e.text, ts.server().options().parse);
      if (parsed.message) {
        session->Handle(std::move(*parsed.message), channel);
      } else {
        channel->Send(SerializeError(parsed.error_id, parsed.error), true);
      }
      std::vector<Json> messages = channel->Messages();
      for (std::size_t i = before; i < messages.size(); ++i) {
        std::string line = Dump(Normalize(messages[i]));
        rewritten << "<" << line << "\n";
        actual.push_back(line);
        if (!g_update) {
          ASSERT_LT(expected_index, expected.size()) << "unexpected output: " << line;
          EXPECT_EQ(line, expected[expected_index]) << "after sending " << e.text;
        }
        ++expected_index;
      }
    }
    if (g_update) {
      std::ofstream(path) << rewritten.str();
    } else {
      EXPECT_EQ(actual.size(), expected.size()) << "expected more output than the server wrote";
    }
    session->Close();
  }
}

}  // namespace
}  // namespace trove::mcp

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--update") trove::mcp::g_update = true;
  }
  return RUN_ALL_TESTS();
}
