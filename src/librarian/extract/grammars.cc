#include "librarian/extract/grammars.h"

#include <tree_sitter/api.h>

extern "C" {
const TSLanguage* tree_sitter_c();
const TSLanguage* tree_sitter_cpp();
const TSLanguage* tree_sitter_python();
const TSLanguage* tree_sitter_javascript();
const TSLanguage* tree_sitter_typescript();
const TSLanguage* tree_sitter_tsx();
const TSLanguage* tree_sitter_go();
const TSLanguage* tree_sitter_rust();
const TSLanguage* tree_sitter_java();
}

// The build (src/librarian/extract/CMakeLists.txt) refuses grammars outside the range of the
// api.h it found; this repeats the check against the header this file is compiled with.
static_assert(TROVE_TS_ABI_MIN == TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION);
static_assert(TROVE_TS_ABI_MAX == TREE_SITTER_LANGUAGE_VERSION);

namespace trove::librarian::extract {
namespace {

constexpr GrammarInfo kGrammars[] = {
    {Language::kC, "c", "tree-sitter-c", TROVE_GRAMMAR_C_VERSION, TROVE_GRAMMAR_C_ABI,
     tree_sitter_c},
    {Language::kCpp, "cpp", "tree-sitter-cpp", TROVE_GRAMMAR_CPP_VERSION, TROVE_GRAMMAR_CPP_ABI,
     tree_sitter_cpp},
    {Language::kPython, "python", "tree-sitter-python", TROVE_GRAMMAR_PYTHON_VERSION,
     TROVE_GRAMMAR_PYTHON_ABI, tree_sitter_python},
    {Language::kJavaScript, "javascript", "tree-sitter-javascript",
     TROVE_GRAMMAR_JAVASCRIPT_VERSION, TROVE_GRAMMAR_JAVASCRIPT_ABI, tree_sitter_javascript},
    {Language::kTypeScript, "typescript", "tree-sitter-typescript",
     TROVE_GRAMMAR_TYPESCRIPT_VERSION, TROVE_GRAMMAR_TYPESCRIPT_ABI, tree_sitter_typescript},
    {Language::kTsx, "tsx", "tree-sitter-typescript", TROVE_GRAMMAR_TSX_VERSION,
     TROVE_GRAMMAR_TSX_ABI, tree_sitter_tsx},
    {Language::kGo, "go", "tree-sitter-go", TROVE_GRAMMAR_GO_VERSION, TROVE_GRAMMAR_GO_ABI,
     tree_sitter_go},
    {Language::kRust, "rust", "tree-sitter-rust", TROVE_GRAMMAR_RUST_VERSION,
     TROVE_GRAMMAR_RUST_ABI, tree_sitter_rust},
    {Language::kJava, "java", "tree-sitter-java", TROVE_GRAMMAR_JAVA_VERSION,
     TROVE_GRAMMAR_JAVA_ABI, tree_sitter_java},
};
static_assert(sizeof(kGrammars) / sizeof(kGrammars[0]) == kTreeSitterLanguageCount);

}  // namespace

const GrammarInfo* FindGrammar(Language language) {
  for (const GrammarInfo& g : kGrammars) {
    if (g.language == language) return &g;
  }
  return nullptr;
}

const GrammarInfo* Grammars(int* count) {
  *count = kTreeSitterLanguageCount;
  return kGrammars;
}

int CoreMinAbi() { return TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION; }
int CoreMaxAbi() { return TREE_SITTER_LANGUAGE_VERSION; }

}  // namespace trove::librarian::extract
