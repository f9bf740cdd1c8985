// Workspace vectors (semvec.h): learning from bags of words, the fold-in, storage in a store and
// the query engine's use of them.
#include "librarian/semvec/semvec.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/hash.h"
#include "base/sqlite.h"
#include "librarian/extract/extract.h"
#include "librarian/query/query.h"
#include "librarian/query/vocabulary.h"
#include "librarian/store/store.h"
#include "librarian/testing/temp_dir.h"

namespace trove::librarian::semvec {
namespace {

// Functions about checksums speak of crc, polynomials and bytes; about sockets of peers, ports
// and connections; about widgets of canvases and pixels. "checksum" and "crc" meet in some
// functions; the target below holds crc words but never "checksum".
std::vector<std::string> Texts() {
  std::vector<std::string> t;
  for (int i = 0; i < 6; ++i) {
    t.push_back(fmt::format("checksum crc polynomial table bytes{} update", i));
    t.push_back(fmt::format("checksum of the buffer: crc ^= poly; digest{}", i));
    t.push_back(fmt::format("socket peer connect port timeout retry{}", i));
    t.push_back(fmt::format("open socket to the peer, connect and listen on port{}", i));
    t.push_back(fmt::format("widget canvas draw pixel colour{}", i));
    t.push_back(fmt::format("render the widget on its canvas pixel by pixel layout{}", i));
  }
  return t;
}

std::vector<std::vector<std::string>> Contexts(const std::vector<std::string>& texts) {
  Tokenizer tok;
  std::vector<std::vector<std::string>> out;
  for (const std::string& t : texts) out.push_back(tok.Words(t));
  return out;
}

TEST(SemvecTest, TokenizerSplitsIdentifiersAndDropsStopWords) {
  Tokenizer tok;
  EXPECT_EQ(tok.Words("the parseHttpHeaders of a_b x"),
            (std::vector<std::string>{query::CanonicalWord("parse"), query::CanonicalWord("http"),
                                      query::CanonicalWord("headers")}));
}

TEST(SemvecTest, WordsThatShareContextsGetCloseVectors) {
  Options o;
  o.dims = 4;
  Model m = Model::Learn(Contexts(Texts()), o);
  ASSERT_EQ(m.dims(), 4u);
  const std::string checksum = query::CanonicalWord("checksum"), crc = query::CanonicalWord("crc"),
                    poly = query::CanonicalWord("polynomial"),
                    socket = query::CanonicalWord("socket"),
                    canvas = query::CanonicalWord("canvas");
  auto cos = [&](const std::string& a, const std::string& b) {
    std::vector<std::string> x = {a}, y = {b};
    return Dot(m.Embed(x), m.Embed(y));
  };
  EXPECT_GT(cos(checksum, poly), 0.5);
  EXPECT_GT(cos(checksum, crc), cos(checksum, socket) + 0.5);
  EXPECT_GT(cos(checksum, crc), cos(checksum, canvas) + 0.5);
  // Unknown words fold into nothing.
  std::vector<std::string> unknown = {"zebra"};
  EXPECT_TRUE(m.Embed(unknown).empty());
  // Deterministic.
  Model again = Model::Learn(Contexts(Texts()), o);
  EXPECT_EQ(again.vectors(), m.vectors());
  EXPECT_EQ(again.word_list(), m.word_list());
}

TEST(SemvecTest, EmptyCorpusLearnsNothing) {
  Model m = Model::Learn({}, Options{});
  EXPECT_EQ(m.dims(), 0u);
  std::vector<std::string> w = {"x"};
  EXPECT_TRUE(m.Embed(w).empty());
}

constexpr const char* kChecksums = R"(
def update_digest(buf, poly):
    """Compute the checksum of the buffer with the polynomial table."""
    crc = 0
    for b in buf:
        crc = table[(crc ^ b) & 0xff] ^ (crc >> 8) ^ poly
    return crc
)";

// The target: its code speaks of crc and polynomials, never of checksums, and it has no doc.
constexpr const char* kTarget = R"(
def fold_bytes(data, generator_poly):
    crc = 0xffffffff
    for octet in data:
        crc = crc_table[(crc ^ octet) & 0xff] ^ (crc >> 8) ^ generator_poly
    return crc ^ 0xffffffff
)";

class SemvecStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto made = extract::Extractor::Create({});
    ASSERT_TRUE(made.ok());
    extractor_ = std::move(made).value();
    auto opened = store::Store::Open(dir_.Abs("index.sqlite"));
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened).value();
    ws_.root = dir_.Abs("ws");
    ws_.workspace_id = "ws_test";
    dir_.MkDir("ws");
    dir_.MkDir("ws/pkg");
  }

  void Index(const std::string& path, const std::string& content) {
    dir_.Write("ws/" + path, content);
    auto facts = extractor_->Extract(path, content, extractor_->Route(path, true));
    ASSERT_TRUE(facts.ok()) << facts.status().ToString();
    struct stat st {};
    ASSERT_EQ(::stat((ws_.root + "/" + path).c_str(), &st), 0);
    store::FileRecord file;
    file.path = path;
    file.sha256 = base::Sha256Hex(content);
    file.language = facts->language;
    file.extractor = facts->extractor;
    file.size = static_cast<std::uint64_t>(st.st_size);
    file.mtime_ns =
        static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    file.run_id = "run_1";
    ASSERT_TRUE(store_->ReplaceFile(file, *facts, content).ok());
  }

  // Documented checksum functions that use crc words, socket and widget functions as
  // distractors, and the undocumented target.
  void IndexWorkspace(bool reverse = false) {
    std::vector<std::pair<std::string, std::string>> files;
    for (int i = 0; i < 5; ++i) {
      files.emplace_back(fmt::format("pkg/sum{}.py", i), kChecksums);
      files.emplace_back(fmt::format("pkg/net{}.py", i), R"(
def open_link(host, port):
    """Open a socket to the peer and wait for the handshake timeout."""
    sock = socket.connect(host, port)
    sock.settimeout(timeout)
    return sock
)");
      files.emplace_back(fmt::format("pkg/ui{}.py", i), R"(
def paint(widget, canvas):
    """Draw the widget on the canvas, pixel by pixel, with its colour."""
    for pixel in widget.pixels:
        canvas.put(pixel, widget.colour)
)");
    }
    files.emplace_back("pkg/target.py", kTarget);
    if (reverse) std::reverse(files.begin(), files.end());
    for (const auto& [path, content] : files) Index(path, content);
  }

  query::QueryResponse Run(const std::string& intent, double weight) {
    query::QueryRequest req;
    req.intent = intent;
    req.depth = query::Depth::kL3;
    req.max_results = 30;
    req.min_confidence = 0;
    req.weights.semvec = weight;
    base::Cancellation cancel;
    Result<query::QueryResponse> r = query::Query(*store_, ws_, req, cancel, nullptr);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(r).value() : query::QueryResponse{};
  }

  testing::TempDir dir_;
  std::unique_ptr<extract::Extractor> extractor_;
  std::unique_ptr<store::Store> store_;
  query::Workspace ws_;
};

TEST_F(SemvecStoreTest, SavedLoadedAndCached) {
  auto none = Load(store_->db());
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, nullptr);
  IndexWorkspace();
  Options o;
  o.dims = 8;
  auto stats = LearnAndSave(store_->db(), "run_1", o);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->functions, 16u);
  EXPECT_GT(stats->words, 5u);
  auto id = StoredModelId(store_->db());
  ASSERT_TRUE(id.ok());
  EXPECT_TRUE(ModelIdMatches(*id, o));
  o.dims = 16;
  EXPECT_FALSE(ModelIdMatches(*id, o));
  auto loaded = Load(store_->db());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_NE(*loaded, nullptr);
  EXPECT_EQ((*loaded)->functions(), 16u);
  EXPECT_EQ((*loaded)->model().words(), stats->words);
  auto again = Load(store_->db());
  EXPECT_EQ(again->get(), loaded->get());  // cached
}

// The vectors depend on the functions, not on the order in which a bootstrap's workers stored
// them (chunk ids): two stores indexed in opposite orders learn byte-identical vectors.
TEST_F(SemvecStoreTest, VectorsDoNotDependOnTheOrderOfIndexing) {
  auto vectors_of = [](store::Store& s) {
    std::map<std::string, std::string> out;
    auto st = s.db().Prepare(
        "SELECT target_id, hex(vector) FROM embeddings WHERE model = 'workspace-lsa'");
    EXPECT_TRUE(st.ok());
    if (!st.ok()) return out;
    for (;;) {
      auto row = st->Step();
      EXPECT_TRUE(row.ok());
      if (!row.ok() || !*row) break;
      out[st->ColumnText(0)] = st->ColumnText(1);
    }
    return out;
  };
  Options o;
  o.dims = 8;
  IndexWorkspace();
  ASSERT_TRUE(LearnAndSave(store_->db(), "run_1", o).ok());
  const std::map<std::string, std::string> forward = vectors_of(*store_);
  ASSERT_EQ(forward.size(), 16u);

  auto reopened = store::Store::Open(dir_.Abs("reverse.sqlite"));
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  store_ = std::move(reopened).value();
  IndexWorkspace(/*reverse=*/true);
  ASSERT_TRUE(LearnAndSave(store_->db(), "run_1", o).ok());
  EXPECT_EQ(vectors_of(*store_), forward);
}

TEST_F(SemvecStoreTest, FindsAFunctionThatSharesNoWordWithTheIntent) {
  IndexWorkspace();
  Options o;
  // Fewer dimensions than the fixture's four kinds of function (checksum, target, socket,
  // widget), so that the SVD truncates: at full rank (8 dimensions here) the vectors only
  // reproduce the literal word overlap, and the target's cosine to "checksum" was 6e-8, a pass
  // on rounding.
  o.dims = 3;
  ASSERT_TRUE(LearnAndSave(store_->db(), "run_1", o).ok());
  // "checksum" and "verify" occur nowhere in the target (name, code), "checksum" only in the
  // documented functions, next to crc and polynomial words.
  const std::string intent = "verify the checksum";
  // The intent's vector is near the target's, not by rounding.
  {
    auto loaded = Load(store_->db());
    ASSERT_TRUE(loaded.ok() && *loaded != nullptr);
    Tokenizer tok;
    const std::vector<float> q = (*loaded)->model().Embed(tok.Words(intent));
    ASSERT_FALSE(q.empty());
    EXPECT_GT((*loaded)->Similarity(q, "fn:pkg/target.py::fold_bytes"), 0.5);
  }
  auto has_target = [](const query::QueryResponse& r) {
    return std::any_of(r.packs.begin(), r.packs.end(), [](const query::Pack& p) {
      return p.target_id.find("fold_bytes") != std::string::npos;
    });
  };
  query::QueryResponse on = Run(intent, 0.5);
  EXPECT_TRUE(has_target(on));
  bool engine = false;
  for (const query::Stage& s : on.stages) {
    if (s.name == "retrieval") engine = s.engine.find("workspace_lsa") != std::string::npos;
  }
  EXPECT_TRUE(engine);
  EXPECT_TRUE(std::any_of(on.disclosures.begin(), on.disclosures.end(), [](const std::string& d) {
    return d.rfind("retrieval_engines:", 0) == 0 && d.find("workspace_lsa") != std::string::npos;
  }));
  // The socket and widget functions rank below it.
  std::size_t target_at = on.packs.size(), distractor_at = on.packs.size();
  for (std::size_t i = 0; i < on.packs.size(); ++i) {
    const std::string& t = on.packs[i].target_id;
    if (t.find("fold_bytes") != std::string::npos) target_at = std::min(target_at, i);
    if (t.find("open_link") != std::string::npos || t.find("paint") != std::string::npos) {
      distractor_at = std::min(distractor_at, i);
    }
  }
  EXPECT_LT(target_at, distractor_at);
  // Off: the lexical engines alone do not reach it.
  query::QueryResponse off = Run(intent, 0);
  EXPECT_FALSE(has_target(off));
}

TEST_F(SemvecStoreTest, FoldsInTheFunctionsOfReindexedPaths) {
  IndexWorkspace();
  Options o;
  o.dims = 8;
  ASSERT_TRUE(LearnAndSave(store_->db(), "run_1", o).ok());
  auto before = Load(store_->db());
  ASSERT_TRUE(before.ok() && *before != nullptr);
  EXPECT_EQ((*before)->functions(), 16u);
  // A new file after the learning (a watch re-index): its function gets a vector in the stored
  // space, near the checksum words its code uses.
  Index("pkg/late.py", R"(
def late_fold(data, poly):
    crc = 0
    for b in data:
        crc = crc_table[(crc ^ b) & 0xff] ^ poly
    return crc
)");
  const std::vector<std::string> paths = {"pkg/late.py"};
  auto n = FoldIn(store_->db(), paths, "run_2");
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 1u);
  auto id = StoredModelId(store_->db());
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(id->rfind("run_2:", 0), 0u);
  EXPECT_TRUE(ModelIdMatches(*id, o));
  auto after = Load(store_->db());
  ASSERT_TRUE(after.ok() && *after != nullptr);
  EXPECT_NE(after->get(), before->get());  // reloaded under the new id
  EXPECT_EQ((*after)->functions(), 17u);
  Tokenizer tok;
  const std::vector<float> q = (*after)->model().Embed(tok.Words("checksum"));
  ASSERT_FALSE(q.empty());
  EXPECT_GT((*after)->Similarity(q, "fn:pkg/late.py::late_fold"),
            (*after)->Similarity(q, "fn:pkg/net0.py::open_link"));
}

}  // namespace
}  // namespace trove::librarian::semvec
