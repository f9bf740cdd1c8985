// RenderChangelog (docs/warden.md §9.1): the Markdown changelog of one diff. Everything in it is
// a function of the report, sorted with a total order, and numbers have a fixed format, so the
// same report always gives the same bytes.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "warden/diff/diff.h"

namespace trove::warden::diff {

namespace {

// At most this many call-outs or strings per entry and list; the rest is counted.
constexpr std::size_t kMaxListed = 8;
// Strings longer than this many bytes are cut (at a UTF-8 boundary) and marked with "…".
constexpr std::size_t kMaxStringBytes = 80;

// `text` as an inline code span whatever it holds: control characters become U+FFFD, and the
// fence is one backtick longer than the longest run inside (CommonMark), padded with spaces
// when the text starts or ends with a backtick.
std::string Code(std::string_view text) {
  std::string clean;
  std::size_t run = 0, longest = 0;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      clean += "\xef\xbf\xbd";
    } else {
      clean.push_back(ch);
    }
    run = ch == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(longest + 1, '`');
  const bool pad = !clean.empty() && (clean.front() == '`' || clean.back() == '`');
  return fence + (pad ? " " : "") + clean + (pad ? " " : "") + fence;
}

// A referenced string as a JSON literal (quotes, escapes, invalid UTF-8 replaced), cut.
std::string Quoted(const std::string& s) {
  std::string cut = s;
  bool cut_off = false;
  if (cut.size() > kMaxStringBytes) {
    std::size_t end = kMaxStringBytes;
    while (end > 0 && (static_cast<unsigned char>(cut[end]) & 0xc0) == 0x80) --end;
    cut.resize(end);
    cut_off = true;
  }
  std::string j =
      nlohmann::json(cut).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (cut_off) j += "…";
  return Code(j);
}

std::string List(const std::vector<std::string>& items, bool strings) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < kMaxListed; ++i) {
    if (i > 0) out += ", ";
    out += strings ? Quoted(items[i]) : Code(items[i]);
  }
  if (items.size() > kMaxListed) out += fmt::format(" and {} more", items.size() - kMaxListed);
  return out;
}

std::string Func(std::optional<std::uint32_t> index) {
  return index ? fmt::format("func[{}]", *index) : std::string("-");
}

std::string Title(const Change& c) {
  if (c.name) return Code(*c.name);
  return Func(c.change == ChangeClass::kDeleted ? c.from_index : c.to_index);
}

std::string Entry(const Change& c) {
  std::vector<std::string> parts;
  switch (c.change) {
    case ChangeClass::kModified: {
      parts.push_back(fmt::format("{} → {}, score {:.3f} ({})", Func(c.from_index),
                                  Func(c.to_index), c.score, PassName(c.pass)));
      const std::int64_t from_n = c.from_instructions.value_or(0);
      const std::int64_t to_n = c.to_instructions.value_or(0);
      parts.push_back(fmt::format("instructions {} → {} ({:+d})", from_n, to_n, to_n - from_n));
      if (c.from_type && c.to_type && *c.from_type != *c.to_type) {
        parts.push_back(fmt::format("type {} → {}", Code(*c.from_type), Code(*c.to_type)));
      }
      if (!c.call_outs_added.empty()) {
        parts.push_back("calls added: " + List(c.call_outs_added, false));
      }
      if (!c.call_outs_removed.empty()) {
        parts.push_back("calls removed: " + List(c.call_outs_removed, false));
      }
      if (!c.strings_added.empty())
        parts.push_back("strings added: " + List(c.strings_added, true));
      if (!c.strings_removed.empty()) {
        parts.push_back("strings removed: " + List(c.strings_removed, true));
      }
      break;
    }
    case ChangeClass::kNew:
    case ChangeClass::kDeleted: {
      const bool added = c.change == ChangeClass::kNew;
      parts.push_back(Func(added ? c.to_index : c.from_index));
      parts.push_back(fmt::format("{} instructions", added ? c.to_instructions.value_or(0)
                                                           : c.from_instructions.value_or(0)));
      const std::optional<std::string>& type = added ? c.to_type : c.from_type;
      if (type) parts.push_back("type " + Code(*type));
      const std::vector<std::string>& calls = added ? c.call_outs_added : c.call_outs_removed;
      if (!calls.empty()) parts.push_back("calls: " + List(calls, false));
      const std::vector<std::string>& strings = added ? c.strings_added : c.strings_removed;
      if (!strings.empty()) parts.push_back("strings: " + List(strings, true));
      break;
    }
    case ChangeClass::kUnchanged:
    case ChangeClass::kMoved:
      break;
  }
  std::string out = "- " + Title(c);
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? " — " : "; ") + parts[i];
  return out + "\n";
}

// Named entries by name (bytes), then index; unnamed ones after them by index.
bool EntryBefore(const Change* a, const Change* b) {
  auto key = [](const Change* c) {
    const std::uint32_t index =
        c->change == ChangeClass::kDeleted ? c->from_index.value_or(0) : c->to_index.value_or(0);
    return std::make_tuple(!c->name.has_value(), c->name.value_or(""), index,
                           c->from_index.value_or(0));
  };
  return key(a) < key(b);
}

}  // namespace

std::string RenderChangelog(const DiffReport& report) {
  std::string out = fmt::format("# {} → {}\n\n", report.from.label, report.to.label);
  out += "| class | application | runtime | total |\n|---|---:|---:|---:|\n";
  std::array<std::int64_t, kOriginCount> totals{};
  for (std::size_t c = 0; c < kChangeClassCount; ++c) {
    const auto& row = report.counts[c];
    out += fmt::format("| {} | {} | {} | {} |\n", ChangeClassName(static_cast<ChangeClass>(c)),
                       row[0], row[1], row[0] + row[1]);
    totals[0] += row[0];
    totals[1] += row[1];
  }
  out += fmt::format("| total | {} | {} | {} |\n\n", totals[0], totals[1], totals[0] + totals[1]);

  const std::string from_em = report.from.emscripten_version.value_or("unknown");
  const std::string to_em = report.to.emscripten_version.value_or("unknown");
  if (report.toolchain_changed) {
    out += fmt::format("Toolchain changed: Emscripten {} → {}.\n", from_em, to_em);
  } else if (from_em == to_em) {
    out += fmt::format("Toolchain: Emscripten {} in both.\n", from_em);
  } else {
    out += fmt::format("Toolchain: Emscripten {} → {} (not both known).\n", from_em, to_em);
  }
  out += "Pairs by pass:";
  for (std::size_t p = 1; p < kPassCount; ++p) {
    out += fmt::format("{} {} {}", p == 1 ? "" : ",", PassName(static_cast<Pass>(p)),
                       report.pass_pairs[p]);
  }
  out += ".\n";

  const std::pair<ChangeClass, const char*> sections[] = {
      {ChangeClass::kModified, "Modified"},
      {ChangeClass::kNew, "New"},
      {ChangeClass::kDeleted, "Deleted"},
  };
  for (const auto& [cls, heading] : sections) {
    out += fmt::format("\n## {}\n", heading);
    bool any = false;
    for (Origin origin : {Origin::kApplication, Origin::kRuntime}) {
      std::vector<const Change*> entries;
      for (const Change& c : report.changes) {
        if (c.change == cls && c.origin == origin) entries.push_back(&c);
      }
      if (entries.empty()) continue;
      any = true;
      std::sort(entries.begin(), entries.end(), EntryBefore);
      out +=
          fmt::format("\n### {} ({})\n\n",
                      origin == Origin::kApplication ? "Application" : "Runtime", entries.size());
      for (const Change* c : entries) out += Entry(*c);
    }
    if (!any) out += "\nNone.\n";
  }
  return out;
}

}  // namespace trove::warden::diff
