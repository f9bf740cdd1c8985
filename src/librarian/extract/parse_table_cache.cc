#include "librarian/extract/parse_table_cache.h"

#include <dlfcn.h>
#include <tree_sitter/parser.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>

namespace trove::librarian::extract::internal {
namespace {

// The core's TableEntry (lib/src/language.h of tree-sitter 0.20.7), which ts_language_table_entry
// fills in. Mirrored here because the core does not install that header; CMake compiles the
// interposition only for the libtree-sitter this layout was checked against.
struct CoreTableEntry {
  const TSParseAction* actions;
  std::uint32_t action_count;
  bool is_reusable;
};

using TableEntryFn = void (*)(const TSLanguage*, TSStateId, TSSymbol, CoreTableEntry*);

// The library's ts_language_table_entry: the next definition after this executable's.
TableEntryFn LibraryTableEntry() {
  static const TableEntryFn fn =
      reinterpret_cast<TableEntryFn>(dlsym(RTLD_NEXT, "ts_language_table_entry"));
  return fn;
}

// One grammar's action indexes: index[state * tokens + token] is the parse_actions offset the
// library's lookup returns for that pair.
struct DenseTable {
  const TSLanguage* language = nullptr;
  std::uint32_t states = 0;
  std::uint32_t tokens = 0;
  std::unique_ptr<std::uint16_t[]> index;
};

// Published tables; never freed (a few MB per grammar, at most one per linked grammar).
constexpr int kMaxTables = 32;
std::atomic<const DenseTable*> g_tables[kMaxTables];
std::atomic<int> g_table_count{0};
std::mutex g_build_mu;
// Grammars whose table could not be built: not tried again.
const TSLanguage* g_refused[kMaxTables];
int g_refused_count = 0;

const DenseTable* FindTable(const TSLanguage* language) {
  thread_local const DenseTable* last = nullptr;
  if (last != nullptr && last->language == language) return last;
  const int n = g_table_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    const DenseTable* t = g_tables[i].load(std::memory_order_acquire);
    if (t != nullptr && t->language == language) {
      last = t;
      return t;
    }
  }
  return nullptr;
}

// Builds the table from the library's answers; null when some answer cannot be expressed as
// an index into parse_actions (then the library keeps answering for this grammar).
std::unique_ptr<DenseTable> Build(const TSLanguage* language, TableEntryFn library) {
  auto table = std::make_unique<DenseTable>();
  table->language = language;
  table->states = language->state_count;
  table->tokens = language->token_count;
  const std::size_t cells = std::size_t{table->states} * table->tokens;
  if (cells == 0) return nullptr;
  table->index = std::make_unique<std::uint16_t[]>(cells);
  const TSParseActionEntry* base = language->parse_actions;
  for (std::uint32_t state = 0; state < table->states; ++state) {
    for (std::uint32_t token = 0; token < table->tokens; ++token) {
      CoreTableEntry entry{};
      library(language, static_cast<TSStateId>(state), static_cast<TSSymbol>(token), &entry);
      if (entry.actions == nullptr) return nullptr;
      const TSParseActionEntry* head =
          reinterpret_cast<const TSParseActionEntry*>(entry.actions) - 1;
      const std::ptrdiff_t offset = head - base;
      if (offset < 0 || offset > UINT16_MAX || head->entry.count != entry.action_count ||
          head->entry.reusable != entry.is_reusable) {
        return nullptr;
      }
      table->index[std::size_t{state} * table->tokens + token] = static_cast<std::uint16_t>(offset);
    }
  }
  return table;
}

void Lookup(const TSLanguage* self, TSStateId state, TSSymbol symbol, CoreTableEntry* result) {
  const DenseTable* t = FindTable(self);
  if (t != nullptr && state < t->states && symbol < t->tokens) {
    const TSParseActionEntry* head =
        &self->parse_actions[t->index[std::size_t{state} * t->tokens + symbol]];
    result->action_count = head->entry.count;
    result->is_reusable = head->entry.reusable;
    result->actions = reinterpret_cast<const TSParseAction*>(head + 1);
    return;
  }
  LibraryTableEntry()(self, state, symbol, result);
}

}  // namespace

bool ParseTableInterpositionBuilt() {
#ifdef TROVE_TS_INTERPOSE_TABLE_ENTRY
  return true;
#else
  return false;
#endif
}

bool ParseTableInterposed() {
#ifdef TROVE_TS_INTERPOSE_TABLE_ENTRY
  void* global = dlsym(RTLD_DEFAULT, "ts_language_table_entry");
  TableEntryFn library = LibraryTableEntry();
  return global != nullptr && library != nullptr && global != reinterpret_cast<void*>(library);
#else
  return false;
#endif
}

void PrepareParseTable(const TSLanguage* language) {
  if (language == nullptr || FindTable(language) != nullptr || !ParseTableInterposed()) return;
  std::lock_guard lock(g_build_mu);
  if (FindTable(language) != nullptr) return;
  for (int i = 0; i < g_refused_count; ++i) {
    if (g_refused[i] == language) return;
  }
  const int n = g_table_count.load(std::memory_order_relaxed);
  std::unique_ptr<DenseTable> table;
  if (n < kMaxTables) table = Build(language, LibraryTableEntry());
  if (table == nullptr) {
    if (g_refused_count < kMaxTables) g_refused[g_refused_count++] = language;
    return;
  }
  g_tables[n].store(table.release(), std::memory_order_release);
  g_table_count.store(n + 1, std::memory_order_release);
}

bool LibraryTableEntryForTesting(const TSLanguage* language, std::uint16_t state,
                                 std::uint16_t symbol, TableEntryForTesting* out) {
  TableEntryFn library = LibraryTableEntry();
  if (library == nullptr) return false;
  CoreTableEntry entry{};
  library(language, state, symbol, &entry);
  *out = TableEntryForTesting{entry.actions, entry.action_count, entry.is_reusable};
  return true;
}

void TableEntryForTestingLookup(const TSLanguage* language, std::uint16_t state,
                                std::uint16_t symbol, TableEntryForTesting* out) {
  CoreTableEntry entry{};
  Lookup(language, state, symbol, &entry);
  *out = TableEntryForTesting{entry.actions, entry.action_count, entry.is_reusable};
}

void ParseTableShapeForTesting(const TSLanguage* language, std::uint32_t* states,
                               std::uint32_t* tokens) {
  *states = language->state_count;
  *tokens = language->token_count;
}

bool HasParseTableForTesting(const TSLanguage* language) { return FindTable(language) != nullptr; }

}  // namespace trove::librarian::extract::internal

#ifdef TROVE_TS_INTERPOSE_TABLE_ENTRY
// The interposing definition (see the header). The core declares it with C linkage.
// `result` is the core's TableEntry (CoreTableEntry above).
extern "C" void ts_language_table_entry(const TSLanguage* self, TSStateId state, TSSymbol symbol,
                                        void* result) {
  trove::librarian::extract::internal::Lookup(
      self, state, symbol,
      static_cast<trove::librarian::extract::internal::CoreTableEntry*>(result));
}
#endif
