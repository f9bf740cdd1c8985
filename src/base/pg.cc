#include "base/pg.h"

#include <fmt/core.h>
#include <libpq-fe.h>
#include <poll.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

namespace trove::base::pg {

namespace {

constexpr std::size_t kMaxSqlInMessage = 60;
constexpr std::size_t kCopyChunkBytes = 1 << 20;
// Statements prepared on one connection before the cache is emptied (DEALLOCATE ALL), so
// statements built from changing text cannot grow the server's memory without bound.
constexpr std::size_t kMaxPrepared = 1000;

// Type oids (src/include/catalog/pg_type.dat).
constexpr unsigned kBoolOid = 16;
constexpr unsigned kByteaOid = 17;
constexpr unsigned kCharOid = 18;
constexpr unsigned kNameOid = 19;
constexpr unsigned kInt8Oid = 20;
constexpr unsigned kInt2Oid = 21;
constexpr unsigned kInt4Oid = 23;
constexpr unsigned kTextOid = 25;
constexpr unsigned kOidOid = 26;
constexpr unsigned kJsonOid = 114;
constexpr unsigned kFloat4Oid = 700;
constexpr unsigned kFloat8Oid = 701;
constexpr unsigned kUnknownOid = 705;
constexpr unsigned kBpcharOid = 1042;
constexpr unsigned kVarcharOid = 1043;
constexpr unsigned kNumericOid = 1700;
constexpr unsigned kJsonbOid = 3802;

constexpr std::string_view kSqlStateTag = "(sqlstate ";
constexpr std::string_view kLostTag = "connection lost";
constexpr std::string_view kCannotConnectTag = "cannot connect";
constexpr std::string_view kOutcomeUnknownTag = "commit outcome unknown";

// Returns `sql` with whitespace runs collapsed, cut to kMaxSqlInMessage characters.
std::string AbbreviateSql(std::string_view sql) {
  std::string out;
  bool space = false;
  for (char c : sql) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
    if (out.size() >= kMaxSqlInMessage) {
      out += "...";
      break;
    }
  }
  return out;
}

// libpq messages end with a newline and continue lines with "\n\t"; makes them one line and
// drops the "FATAL:  " / "ERROR:  " severity prefixes.
std::string OneLine(std::string_view text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == '\n' || c == '\r' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space && out.back() != ' ') out += ' ';
    space = false;
    out += c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  for (std::string_view prefix : {"FATAL:  ", "ERROR:  "}) {
    std::size_t pos;
    while ((pos = out.find(prefix)) != std::string::npos) out.erase(pos, prefix.size());
  }
  return out;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string PercentDecode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      int hi = HexValue(text[i + 1]);
      int lo = HexValue(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

struct UrlParts {
  std::size_t authority_begin = 0;        // after "://"
  std::size_t authority_end = 0;          // at '/', '?', '#' or the end
  std::size_t at = std::string::npos;     // the '@' ending the userinfo, or npos
  std::size_t colon = std::string::npos;  // the ':' in the userinfo, or npos
  std::size_t query = std::string::npos;  // the '?', or npos
};

UrlParts SplitUrl(std::string_view url) {
  UrlParts parts;
  parts.authority_begin = url.find("://") + 3;
  parts.authority_end = url.find_first_of("/?#", parts.authority_begin);
  if (parts.authority_end == std::string_view::npos) parts.authority_end = url.size();
  std::string_view authority =
      url.substr(parts.authority_begin, parts.authority_end - parts.authority_begin);
  std::size_t at = authority.rfind('@');
  if (at != std::string_view::npos) {
    parts.at = parts.authority_begin + at;
    std::size_t colon = authority.substr(0, at).find(':');
    if (colon != std::string_view::npos) parts.colon = parts.authority_begin + colon;
  }
  std::size_t q = url.find('?', parts.authority_end);
  if (q != std::string_view::npos) parts.query = q;
  return parts;
}

// The passwords `url` carries (as written and percent-decoded), to scrub from messages.
std::vector<std::string> SecretsOf(std::string_view url) {
  std::vector<std::string> out;
  auto add = [&](std::string_view raw) {
    if (raw.empty()) return;
    out.emplace_back(raw);
    std::string decoded = PercentDecode(raw);
    if (decoded != raw && !decoded.empty()) out.push_back(std::move(decoded));
  };
  if (IsPostgresUrl(url)) {
    UrlParts parts = SplitUrl(url);
    if (parts.colon != std::string::npos) {
      add(url.substr(parts.colon + 1, parts.at - parts.colon - 1));
    }
    if (parts.query != std::string::npos) {
      std::string_view query = url.substr(parts.query + 1);
      query = query.substr(0, query.find('#'));
      while (!query.empty()) {
        std::size_t amp = query.find('&');
        std::string_view param = query.substr(0, amp);
        if (param.starts_with("password=")) add(param.substr(9));
        if (amp == std::string_view::npos) break;
        query.remove_prefix(amp + 1);
      }
    }
  } else {
    std::size_t pos = url.find("password=");
    if (pos != std::string_view::npos) {
      std::string_view rest = url.substr(pos + 9);
      if (!rest.empty() && rest[0] == '\'') {
        add(rest.substr(1, rest.find('\'', 1) - 1));
      } else {
        add(rest.substr(0, rest.find(' ')));
      }
    }
  }
  // Longest first, so a password containing another is replaced whole.
  std::sort(out.begin(), out.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  return out;
}

std::string Scrub(std::string text, const std::vector<std::string>& secrets) {
  for (const std::string& secret : secrets) {
    std::size_t pos = 0;
    while ((pos = text.find(secret, pos)) != std::string::npos) {
      text.replace(pos, secret.size(), "***");
      pos += 3;
    }
  }
  return text;
}

bool IsLostState(std::string_view state) {
  return state.starts_with("08") || state == "57P01" || state == "57P02" || state == "57P03";
}

std::string WithState(std::string message, std::string_view state) {
  if (!state.empty()) message += fmt::format(" {}{})", kSqlStateTag, state);
  return message;
}

// Maps a server error to a Status (the connection is alive or the state says otherwise).
Status StateError(std::string_view state, std::string_view op, std::string_view detail) {
  std::string message = WithState(fmt::format("{}: {}", op, detail), state);
  if (state == "40001" || state == "40P01") return Status::Unavailable(std::move(message));
  if (state == "23505") return Status::AlreadyExists(std::move(message));
  if (state == "28P01" || state == "28000") return Status::PermissionDenied(std::move(message));
  if (state == "3D000") return Status::NotFound(std::move(message));
  if (state == "P0001") return Status::InvalidArgument(std::move(message));
  if (state == "57014") return Status::Cancelled(std::move(message));
  return Status::Io(std::move(message));
}

std::uint16_t ReadU16(const char* p) {
  return static_cast<std::uint16_t>((static_cast<unsigned char>(p[0]) << 8) |
                                    static_cast<unsigned char>(p[1]));
}
std::uint32_t ReadU32(const char* p) {
  return (std::uint32_t{static_cast<unsigned char>(p[0])} << 24) |
         (std::uint32_t{static_cast<unsigned char>(p[1])} << 16) |
         (std::uint32_t{static_cast<unsigned char>(p[2])} << 8) |
         std::uint32_t{static_cast<unsigned char>(p[3])};
}
std::uint64_t ReadU64(const char* p) { return (std::uint64_t{ReadU32(p)} << 32) | ReadU32(p + 4); }

// Decodes a binary numeric to its decimal text (NaN and infinities as PostgreSQL spells them).
std::string NumericText(std::string_view raw) {
  if (raw.size() < 8) return "0";
  int ndigits = static_cast<std::int16_t>(ReadU16(raw.data()));
  int weight = static_cast<std::int16_t>(ReadU16(raw.data() + 2));
  std::uint16_t sign = ReadU16(raw.data() + 4);
  int dscale = ReadU16(raw.data() + 6);
  if (sign == 0xC000) return "NaN";
  if (sign == 0xD000) return "Infinity";
  if (sign == 0xF000) return "-Infinity";
  if (ndigits < 0 || raw.size() < 8 + 2 * static_cast<std::size_t>(ndigits)) return "0";
  auto digit = [&](int i) -> int {
    return i >= 0 && i < ndigits ? ReadU16(raw.data() + 8 + 2 * i) : 0;
  };
  std::string out;
  if (sign == 0x4000) out += '-';
  if (weight < 0) {
    out += '0';
  } else {
    for (int i = 0; i <= weight; ++i) {
      out += i == 0 ? fmt::format("{}", digit(i)) : fmt::format("{:04}", digit(i));
    }
  }
  if (dscale > 0) {
    std::string frac;
    for (int j = 1; static_cast<int>(frac.size()) < dscale; ++j) {
      frac += fmt::format("{:04}", digit(weight + j));
    }
    frac.resize(dscale);
    out += '.';
    out += frac;
  }
  return out;
}

bool IsTextLike(unsigned type) {
  switch (type) {
    case kTextOid:
    case kVarcharOid:
    case kNameOid:
    case kBpcharOid:
    case kCharOid:
    case kJsonOid:
    case kUnknownOid:
    case kByteaOid:
      return true;
    default:
      return false;
  }
}

void Sleep(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

void IgnoreNotice(void*, const char*) {}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Free functions

bool IsPostgresUrl(std::string_view target) {
  return target.starts_with("postgresql://") || target.starts_with("postgres://");
}

std::string RedactUrl(std::string_view url) {
  if (!IsPostgresUrl(url)) {
    std::string out(url);
    for (const std::string& secret : SecretsOf(url)) {
      std::size_t pos = out.find("password=");
      if (pos == std::string::npos) break;
      std::size_t end = out.find(secret, pos);
      if (end == std::string::npos) break;
      end += secret.size();
      if (end < out.size() && out[end] == '\'') ++end;
      while (end < out.size() && out[end] == ' ') ++end;
      out.erase(pos, end - pos);
      while (!out.empty() && out.back() == ' ') out.pop_back();
      break;
    }
    return out;
  }
  UrlParts parts = SplitUrl(url);
  std::string out;
  if (parts.colon != std::string::npos) {
    out = std::string(url.substr(0, parts.colon + 1)) + "***";
    out += url.substr(parts.at, parts.authority_end - parts.at);
  } else {
    out = std::string(url.substr(0, parts.authority_end));
  }
  if (parts.query == std::string::npos) {
    out += url.substr(parts.authority_end);
    return out;
  }
  out += url.substr(parts.authority_end, parts.query - parts.authority_end);
  std::string_view query = url.substr(parts.query + 1);
  std::string_view fragment;
  if (std::size_t hash = query.find('#'); hash != std::string_view::npos) {
    fragment = query.substr(hash);
    query = query.substr(0, hash);
  }
  std::string kept;
  while (true) {
    std::size_t amp = query.find('&');
    std::string_view param = query.substr(0, amp);
    if (!param.empty() && !param.starts_with("password=")) {
      kept += kept.empty() ? "?" : "&";
      kept += param;
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  out += kept;
  out += fragment;
  return out;
}

std::string_view SqlStateOf(const Status& status) {
  const std::string& message = status.message();
  std::size_t pos = message.rfind(kSqlStateTag);
  if (pos == std::string::npos || pos + kSqlStateTag.size() + 5 > message.size()) return {};
  return std::string_view(message).substr(pos + kSqlStateTag.size(), 5);
}

bool IsRetryable(const Status& status) {
  if (status.code() != StatusCode::kUnavailable) return false;
  std::string_view state = SqlStateOf(status);
  return state == "40001" || state == "40P01";
}

bool IsConnectionLost(const Status& status) {
  if (status.code() != StatusCode::kUnavailable) return false;
  const std::string& message = status.message();
  return message.find(kLostTag) != std::string::npos ||
         message.find(kCannotConnectTag) != std::string::npos;
}

bool IsCommitOutcomeUnknown(const Status& status) {
  return status.code() == StatusCode::kUnavailable &&
         status.message().find(kOutcomeUnknownTag) != std::string::npos;
}

namespace {

// RewritePlaceholders, also returning the number of parameters (the largest index).
std::string Rewrite(std::string_view sql, int* param_count) {
  std::string out;
  out.reserve(sql.size() + 8);
  int max_index = 0;
  std::size_t i = 0;
  auto copy_until = [&](std::string_view end) {
    std::size_t stop = sql.find(end, i);
    stop = stop == std::string_view::npos ? sql.size() : stop + end.size();
    out.append(sql.substr(i, stop - i));
    i = stop;
  };
  while (i < sql.size()) {
    char c = sql[i];
    if (c == '\'' || c == '"') {
      // A quoted string or identifier; a doubled quote inside is an escaped quote, which this
      // loop handles as the end of one quoted run followed by the start of another.
      std::size_t stop = sql.find(c, i + 1);
      stop = stop == std::string_view::npos ? sql.size() : stop + 1;
      out.append(sql.substr(i, stop - i));
      i = stop;
    } else if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      copy_until("\n");
    } else if (c == '/' && i + 1 < sql.size() && sql[i + 1] == '*') {
      copy_until("*/");
    } else if (c == '$') {
      // $N (an existing parameter) or a dollar-quote tag $tag$ ... $tag$.
      std::size_t j = i + 1;
      if (j < sql.size() && std::isdigit(static_cast<unsigned char>(sql[j]))) {
        int n = 0;
        while (j < sql.size() && std::isdigit(static_cast<unsigned char>(sql[j]))) {
          n = std::min(n * 10 + (sql[j] - '0'), 100000);
          ++j;
        }
        max_index = std::max(max_index, n);
        out.append(sql.substr(i, j - i));
        i = j;
        continue;
      }
      while (j < sql.size() &&
             (std::isalnum(static_cast<unsigned char>(sql[j])) || sql[j] == '_')) {
        ++j;
      }
      if (j < sql.size() && sql[j] == '$' &&
          (i == 0 || !std::isalnum(static_cast<unsigned char>(sql[i - 1])))) {
        std::string_view tag = sql.substr(i, j + 1 - i);
        out.append(tag);
        i = j + 1;
        copy_until(tag);
      } else {
        out += c;
        ++i;
      }
    } else if (c == '?') {
      std::size_t j = i + 1;
      int n = 0;
      while (j < sql.size() && std::isdigit(static_cast<unsigned char>(sql[j]))) {
        n = std::min(n * 10 + (sql[j] - '0'), 100000);
        ++j;
      }
      if (j == i + 1) n = max_index + 1;
      max_index = std::max(max_index, n);
      out += fmt::format("${}", n);
      i = j;
    } else {
      out += c;
      ++i;
    }
  }
  if (param_count != nullptr) *param_count = max_index;
  return out;
}

}  // namespace

std::string RewritePlaceholders(std::string_view sql) { return Rewrite(sql, nullptr); }

std::string QuoteIdentifier(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string QuoteLiteral(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += '\'';
    out += c;
  }
  out += '\'';
  return out;
}

// ---------------------------------------------------------------------------------------------
// Statement

Statement::Statement(Connection* conn, std::string sql, int param_count)
    : conn_(conn),
      sql_(std::move(sql)),
      values_(param_count),
      formats_(param_count, 0),
      nulls_(param_count, 1) {}

Statement::Statement(Statement&& other) noexcept
    : conn_(std::exchange(other.conn_, nullptr)),
      sql_(std::move(other.sql_)),
      values_(std::move(other.values_)),
      formats_(std::move(other.formats_)),
      nulls_(std::move(other.nulls_)),
      result_(std::exchange(other.result_, nullptr)),
      row_(other.row_),
      rows_(other.rows_),
      executed_(other.executed_),
      done_(other.done_),
      streaming_(other.streaming_),
      stream_active_(std::exchange(other.stream_active_, false)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    Clear();
    conn_ = std::exchange(other.conn_, nullptr);
    sql_ = std::move(other.sql_);
    values_ = std::move(other.values_);
    formats_ = std::move(other.formats_);
    nulls_ = std::move(other.nulls_);
    result_ = std::exchange(other.result_, nullptr);
    row_ = other.row_;
    rows_ = other.rows_;
    executed_ = other.executed_;
    done_ = other.done_;
    streaming_ = other.streaming_;
    stream_active_ = std::exchange(other.stream_active_, false);
  }
  return *this;
}

Statement::~Statement() { Clear(); }

void Statement::Clear() {
  if (result_ != nullptr) PQclear(result_);
  result_ = nullptr;
  if (stream_active_ && conn_ != nullptr && conn_->conn_ != nullptr) {
    // Drain the rest of a streamed result so the connection can run the next command.
    while (PGresult* r = PQgetResult(conn_->conn_)) PQclear(r);
  }
  stream_active_ = false;
  row_ = -1;
  rows_ = 0;
  executed_ = false;
  done_ = false;
}

void Statement::Reset() { Clear(); }

Status Statement::SetParam(int index, std::string value, bool binary, bool null) {
  if (index < 1 || index > static_cast<int>(values_.size())) {
    return Status::InvalidArgument(
        fmt::format("bind parameter {}: out of range (statement `{}` has {})", index,
                    AbbreviateSql(sql_), values_.size()));
  }
  if (executed_) Clear();
  values_[index - 1] = std::move(value);
  formats_[index - 1] = binary ? 1 : 0;
  nulls_[index - 1] = null ? 1 : 0;
  return Status::Ok();
}

Status Statement::BindInt64(int index, std::int64_t value) {
  return SetParam(index, fmt::format("{}", value), false, false);
}

Status Statement::Bind(int index, double value) {
  if (std::isnan(value)) return SetParam(index, {}, false, true);
  if (std::isinf(value)) return SetParam(index, value > 0 ? "Infinity" : "-Infinity", false, false);
  return SetParam(index, fmt::format("{}", value), false, false);
}

Status Statement::Bind(int index, std::string_view text) {
  return SetParam(index, std::string(text), false, false);
}

Status Statement::Bind(int index, std::span<const std::uint8_t> blob) {
  return SetParam(index, std::string(reinterpret_cast<const char*>(blob.data()), blob.size()), true,
                  false);
}

Status Statement::Bind(int index, std::nullptr_t) { return SetParam(index, {}, false, true); }

Status Statement::BindBlob(int index, std::string_view bytes) {
  return SetParam(index, std::string(bytes), true, false);
}

Status Statement::Execute() {
  RETURN_IF_ERROR(conn_->EnsureReady());
  ASSIGN_OR_RETURN(std::string name, conn_->PreparedName(sql_, static_cast<int>(values_.size())));
  int n = static_cast<int>(values_.size());
  std::vector<const char*> values(n);
  std::vector<int> lengths(n);
  for (int i = 0; i < n; ++i) {
    values[i] = nulls_[i] ? nullptr : values_[i].data();
    lengths[i] = static_cast<int>(values_[i].size());
  }
  std::string op = fmt::format("exec `{}`", AbbreviateSql(sql_));
  executed_ = true;
  if (streaming_) {
    if (PQsendQueryPrepared(conn_->conn_, name.c_str(), n, values.data(), lengths.data(),
                            formats_.data(), 1) != 1) {
      return conn_->ConnError(op);
    }
    stream_active_ = true;
    PQsetSingleRowMode(conn_->conn_);
    return Status::Ok();
  }
  PGresult* result = PQexecPrepared(conn_->conn_, name.c_str(), n, values.data(), lengths.data(),
                                    formats_.data(), 1);
  ExecStatusType st = result != nullptr ? PQresultStatus(result) : PGRES_FATAL_ERROR;
  if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
    Status status = conn_->ResultError(result, op);
    PQclear(result);
    done_ = true;
    return status;
  }
  result_ = result;
  rows_ = PQntuples(result);
  row_ = -1;
  return Status::Ok();
}

Result<bool> Statement::Step() {
  if (conn_ == nullptr) return Status::Internal("step: statement was moved from");
  if (!executed_) RETURN_IF_ERROR(Execute());
  if (done_) return false;
  if (!streaming_) {
    if (row_ + 1 < rows_) {
      ++row_;
      return true;
    }
    done_ = true;
    return false;
  }
  if (result_ != nullptr) PQclear(result_);
  result_ = PQgetResult(conn_->conn_);
  ExecStatusType st = result_ != nullptr ? PQresultStatus(result_) : PGRES_FATAL_ERROR;
  if (st == PGRES_SINGLE_TUPLE) {
    rows_ = 1;
    row_ = 0;
    return true;
  }
  Status status;
  if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
    status = conn_->ResultError(result_, fmt::format("exec `{}`", AbbreviateSql(sql_)));
  }
  if (result_ != nullptr) PQclear(result_);
  result_ = nullptr;
  while (PGresult* r = PQgetResult(conn_->conn_)) PQclear(r);
  stream_active_ = false;
  done_ = true;
  rows_ = 0;
  row_ = -1;
  RETURN_IF_ERROR(status);
  return false;
}

Result<std::int64_t> Statement::Run() {
  if (conn_ == nullptr) return Status::Internal("run: statement was moved from");
  if (executed_) Clear();
  bool streaming = streaming_;
  streaming_ = false;
  Status status = Execute();
  streaming_ = streaming;
  RETURN_IF_ERROR(status);
  const char* tuples = PQcmdTuples(result_);
  std::int64_t changed =
      tuples != nullptr && *tuples != '\0' ? std::strtoll(tuples, nullptr, 10) : 0;
  done_ = true;
  return changed;
}

int Statement::ColumnCount() const { return result_ != nullptr ? PQnfields(result_) : 0; }

std::string Statement::ColumnName(int column) const {
  const char* name = result_ != nullptr ? PQfname(result_, column) : nullptr;
  return name != nullptr ? name : "";
}

bool Statement::ColumnIsNull(int column) const {
  return result_ == nullptr || row_ < 0 || PQgetisnull(result_, row_, column) == 1;
}

unsigned Statement::ColumnType(int column) const {
  return result_ != nullptr ? PQftype(result_, column) : 0;
}

std::string_view Statement::Raw(int column) const {
  if (ColumnIsNull(column)) return {};
  return std::string_view(PQgetvalue(result_, row_, column), PQgetlength(result_, row_, column));
}

std::int64_t Statement::ColumnInt64(int column) const {
  std::string_view raw = Raw(column);
  if (ColumnIsNull(column)) return 0;
  switch (ColumnType(column)) {
    case kInt8Oid:
      return raw.size() == 8 ? static_cast<std::int64_t>(ReadU64(raw.data())) : 0;
    case kInt4Oid:
      return raw.size() == 4 ? static_cast<std::int32_t>(ReadU32(raw.data())) : 0;
    case kOidOid:
      return raw.size() == 4 ? ReadU32(raw.data()) : 0;
    case kInt2Oid:
      return raw.size() == 2 ? static_cast<std::int16_t>(ReadU16(raw.data())) : 0;
    case kBoolOid:
      return raw.size() == 1 && raw[0] != 0 ? 1 : 0;
    case kFloat4Oid:
    case kFloat8Oid: {
      double d = ColumnDouble(column);
      if (std::isnan(d)) return 0;
      if (d >= 9.2233720368547758e18) return INT64_MAX;
      if (d <= -9.2233720368547758e18) return INT64_MIN;
      return static_cast<std::int64_t>(d);
    }
    default: {
      std::string text = ColumnText(column);
      if (text.find_first_of(".eE") != std::string::npos) {
        return static_cast<std::int64_t>(std::strtod(text.c_str(), nullptr));
      }
      return std::strtoll(text.c_str(), nullptr, 10);
    }
  }
}

double Statement::ColumnDouble(int column) const {
  std::string_view raw = Raw(column);
  if (ColumnIsNull(column)) return 0;
  switch (ColumnType(column)) {
    case kFloat8Oid:
      return raw.size() == 8 ? std::bit_cast<double>(ReadU64(raw.data())) : 0;
    case kFloat4Oid:
      return raw.size() == 4 ? std::bit_cast<float>(ReadU32(raw.data())) : 0;
    case kInt8Oid:
    case kInt4Oid:
    case kInt2Oid:
    case kOidOid:
    case kBoolOid:
      return static_cast<double>(ColumnInt64(column));
    default: {
      std::string text = ColumnText(column);
      return std::strtod(text.c_str(), nullptr);
    }
  }
}

std::string Statement::ColumnText(int column) const { return std::string(ColumnTextView(column)); }

std::string Statement::ColumnBlob(int column) const { return std::string(ColumnBlobView(column)); }

std::string_view Statement::ColumnTextView(int column) const {
  if (ColumnIsNull(column)) return {};
  std::string_view raw = Raw(column);
  unsigned type = ColumnType(column);
  if (IsTextLike(type)) return raw;
  switch (type) {
    case kJsonbOid:
      return raw.empty() ? raw : raw.substr(1);  // version byte 1, then the text
    case kInt8Oid:
    case kInt4Oid:
    case kInt2Oid:
    case kOidOid:
    case kBoolOid:
      scratch_ = fmt::format("{}", ColumnInt64(column));
      return scratch_;
    case kFloat4Oid:
    case kFloat8Oid:
      scratch_ = fmt::format("{}", ColumnDouble(column));
      return scratch_;
    case kNumericOid:
      scratch_ = NumericText(raw);
      return scratch_;
    default:
      return raw;
  }
}

std::string_view Statement::ColumnBlobView(int column) const {
  if (ColumnType(column) == kByteaOid) return Raw(column);
  return ColumnTextView(column);
}

// ---------------------------------------------------------------------------------------------
// Transaction

Transaction::~Transaction() {
  if (conn_ == nullptr) return;
  (void)Rollback();
}

Status Transaction::Commit() {
  if (conn_ == nullptr) return Status::Internal("commit: transaction already ended");
  Connection* conn = std::exchange(conn_, nullptr);
  if (conn->generation_ != generation_) {
    return Status::Unavailable("commit: connection lost, the transaction was rolled back");
  }
  conn->txn_open_ = false;
  if (conn->lost_ || conn->conn_ == nullptr || PQstatus(conn->conn_) != CONNECTION_OK) {
    conn->lost_ = true;
    return Status::Unavailable("commit: connection lost, the transaction was rolled back");
  }
  PGresult* result = PQexec(conn->conn_, "COMMIT");
  ExecStatusType st = result != nullptr ? PQresultStatus(result) : PGRES_FATAL_ERROR;
  if (st != PGRES_COMMAND_OK) {
    Status status = conn->ResultError(result, "commit");
    PQclear(result);
    if (IsConnectionLost(status)) {
      return Status::Unavailable(
          fmt::format("commit: {} ({}): {}", kOutcomeUnknownTag, kLostTag, status.message()));
    }
    return status;
  }
  // COMMIT of a transaction that failed earlier answers ROLLBACK.
  bool rolled_back = std::string_view(PQcmdStatus(result)) == "ROLLBACK";
  PQclear(result);
  if (rolled_back) {
    return Status::Io("commit: the transaction was rolled back after an earlier error");
  }
  return Status::Ok();
}

Status Transaction::Rollback() {
  if (conn_ == nullptr) return Status::Ok();
  Connection* conn = std::exchange(conn_, nullptr);
  if (conn->generation_ != generation_) return Status::Ok();
  conn->txn_open_ = false;
  if (conn->lost_ || conn->conn_ == nullptr || PQstatus(conn->conn_) != CONNECTION_OK) {
    conn->lost_ = true;
    return Status::Ok();  // the server rolled it back when the connection went
  }
  return conn->SimpleCommand("ROLLBACK", false);
}

// ---------------------------------------------------------------------------------------------
// CopyWriter

CopyWriter::CopyWriter(Connection* conn) : conn_(conn) {
  static constexpr char kHeader[] = "PGCOPY\n\377\r\n";  // 11 bytes with the implicit NUL
  buffer_.append(kHeader, 11);
  PutInt32(0);  // flags
  PutInt32(0);  // header extension length
}

CopyWriter::CopyWriter(CopyWriter&& other) noexcept
    : conn_(std::exchange(other.conn_, nullptr)),
      buffer_(std::move(other.buffer_)),
      expected_fields_(other.expected_fields_),
      fields_(other.fields_),
      rows_(other.rows_) {}

CopyWriter::~CopyWriter() {
  if (conn_ == nullptr || conn_->conn_ == nullptr) return;
  PQputCopyEnd(conn_->conn_, "aborted");
  while (PGresult* r = PQgetResult(conn_->conn_)) PQclear(r);
}

void CopyWriter::PutInt32(std::int32_t value) {
  auto v = static_cast<std::uint32_t>(value);
  char bytes[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                   static_cast<char>(v >> 8), static_cast<char>(v)};
  buffer_.append(bytes, 4);
}

void CopyWriter::StartRow(int field_count) {
  expected_fields_ = field_count;
  fields_ = 0;
  auto v = static_cast<std::uint16_t>(field_count);
  buffer_ += static_cast<char>(v >> 8);
  buffer_ += static_cast<char>(v);
}

void CopyWriter::AddNull() {
  ++fields_;
  PutInt32(-1);
}

void CopyWriter::AddInt64(std::int64_t value) {
  ++fields_;
  PutInt32(8);
  auto v = static_cast<std::uint64_t>(value);
  PutInt32(static_cast<std::int32_t>(v >> 32));
  PutInt32(static_cast<std::int32_t>(v & 0xffffffffu));
}

void CopyWriter::AddInt32(std::int32_t value) {
  ++fields_;
  PutInt32(4);
  PutInt32(value);
}

void CopyWriter::AddInt16(std::int16_t value) {
  ++fields_;
  PutInt32(2);
  auto v = static_cast<std::uint16_t>(value);
  buffer_ += static_cast<char>(v >> 8);
  buffer_ += static_cast<char>(v);
}

void CopyWriter::AddBool(bool value) {
  ++fields_;
  PutInt32(1);
  buffer_ += static_cast<char>(value ? 1 : 0);
}

void CopyWriter::AddDouble(double value) {
  ++fields_;
  PutInt32(8);
  auto v = std::bit_cast<std::uint64_t>(value);
  PutInt32(static_cast<std::int32_t>(v >> 32));
  PutInt32(static_cast<std::int32_t>(v & 0xffffffffu));
}

void CopyWriter::AddText(std::string_view text) { AddBytes(text); }

void CopyWriter::AddBytes(std::string_view bytes) {
  ++fields_;
  PutInt32(static_cast<std::int32_t>(bytes.size()));
  buffer_.append(bytes);
}

void CopyWriter::AddBytes(std::span<const std::uint8_t> bytes) {
  AddBytes(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

Status CopyWriter::EndRow() {
  if (conn_ == nullptr) return Status::Internal("copy: already finished");
  if (fields_ != expected_fields_) {
    return Status::InvalidArgument(fmt::format("copy: row {}: {} fields added, {} announced",
                                               rows_ + 1, fields_, expected_fields_));
  }
  ++rows_;
  if (buffer_.size() >= kCopyChunkBytes) return Flush();
  return Status::Ok();
}

Status CopyWriter::Flush() {
  if (buffer_.empty()) return Status::Ok();
  if (PQputCopyData(conn_->conn_, buffer_.data(), static_cast<int>(buffer_.size())) != 1) {
    return conn_->ConnError("copy: send");
  }
  buffer_.clear();
  return Status::Ok();
}

Result<std::int64_t> CopyWriter::Finish() {
  if (conn_ == nullptr) return Status::Internal("copy: already finished");
  buffer_ += '\xff';  // the trailer: a field count of -1
  buffer_ += '\xff';
  Status status = Flush();
  Connection* conn = std::exchange(conn_, nullptr);
  if (!status.ok()) {
    PQputCopyEnd(conn->conn_, "aborted");
    while (PGresult* r = PQgetResult(conn->conn_)) PQclear(r);
    return status;
  }
  if (PQputCopyEnd(conn->conn_, nullptr) != 1) return conn->ConnError("copy: end");
  PGresult* result = PQgetResult(conn->conn_);
  ExecStatusType st = result != nullptr ? PQresultStatus(result) : PGRES_FATAL_ERROR;
  std::int64_t stored = 0;
  if (st != PGRES_COMMAND_OK) {
    status = conn->ResultError(result, "copy");
  } else {
    stored = std::strtoll(PQcmdTuples(result), nullptr, 10);
  }
  PQclear(result);
  while (PGresult* r = PQgetResult(conn->conn_)) PQclear(r);
  RETURN_IF_ERROR(status);
  return stored;
}

// ---------------------------------------------------------------------------------------------
// Connection

Connection::Connection(ConnectOptions options)
    : options_(std::move(options)), target_(RedactUrl(options_.url)) {}

Connection::~Connection() {
  if (conn_ != nullptr) PQfinish(conn_);
}

Result<std::unique_ptr<Connection>> Connection::Open(const ConnectOptions& options) {
  std::unique_ptr<Connection> conn(new Connection(options));
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(std::max(0, options.retry_budget_ms));
  int backoff_ms = 100;
  while (true) {
    Status status = conn->ConnectOnce();
    if (status.ok()) return conn;
    // Only a server that is starting up or shutting down is waited for.
    const std::string& message = status.message();
    bool transient = message.find("starting up") != std::string::npos ||
                     message.find("shutting down") != std::string::npos ||
                     message.find("in recovery") != std::string::npos;
    if (!transient ||
        std::chrono::steady_clock::now() + std::chrono::milliseconds(backoff_ms) > deadline) {
      return status;
    }
    Sleep(backoff_ms);
    backoff_ms = std::min(backoff_ms * 2, 2000);
  }
}

Status Connection::ConnectOnce() {
  if (conn_ != nullptr) {
    PQfinish(conn_);
    conn_ = nullptr;
  }
  if (!IsPostgresUrl(options_.url)) {
    return Status::InvalidArgument(
        fmt::format("{}: not a postgresql:// or postgres:// url", target_));
  }
  std::string timeout = fmt::format("{}", options_.connect_timeout_s);
  // Later keywords override earlier ones, and the URL (dbname with expand_dbname) expands where
  // it stands: the defaults go before it so the URL's own settings win; the encoding after it.
  const char* keys[] = {"application_name", "connect_timeout", "dbname", "client_encoding",
                        nullptr};
  const char* values[] = {options_.application_name.c_str(), timeout.c_str(), options_.url.c_str(),
                          "UTF8", nullptr};
  // A URL libpq cannot parse (or an option value it rejects, "invalid sslmode value") fails the
  // same way every time: kInvalidArgument rather than kUnavailable.
  bool malformed = false;
  {
    char* error = nullptr;
    PQconninfoOption* parsed = PQconninfoParse(options_.url.c_str(), &error);
    malformed = parsed == nullptr;
    if (parsed != nullptr) PQconninfoFree(parsed);
    if (error != nullptr) PQfreemem(error);
  }
  conn_ = PQconnectdbParams(keys, values, 1);
  if (conn_ == nullptr) return Status::Internal("cannot connect: out of memory");
  if (PQstatus(conn_) != CONNECTION_OK) {
    std::string detail = Scrub(OneLine(PQerrorMessage(conn_)), SecretsOf(options_.url));
    PQfinish(conn_);
    conn_ = nullptr;
    lost_ = true;
    if (detail.find("authentication failed") != std::string::npos ||
        detail.find("no password supplied") != std::string::npos ||
        detail.find("no pg_hba.conf entry") != std::string::npos) {
      return Status::PermissionDenied(fmt::format("cannot connect to {}: {}", target_, detail));
    }
    if (detail.find("does not exist") != std::string::npos &&
        detail.find("database") != std::string::npos) {
      return Status::NotFound(fmt::format("cannot connect to {}: {}", target_, detail));
    }
    if (malformed || detail.starts_with("invalid ")) {
      // A malformed URL or option (libpq's parser): the same call will fail again.
      return Status::InvalidArgument(fmt::format("cannot connect to {}: {}", target_, detail));
    }
    return Status::Unavailable(fmt::format("cannot connect to {}: {}", target_, detail));
  }
  PQsetNoticeProcessor(conn_, IgnoreNotice, nullptr);
  lost_ = false;
  txn_open_ = false;
  prepared_.clear();
  ++generation_;
  return Status::Ok();
}

Status Connection::Reset() {
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(std::max(0, options_.retry_budget_ms));
  int backoff_ms = 100;
  while (true) {
    Status status = ConnectOnce();
    if (status.ok()) break;
    if (status.code() != StatusCode::kUnavailable ||
        std::chrono::steady_clock::now() + std::chrono::milliseconds(backoff_ms) > deadline) {
      return status;
    }
    Sleep(backoff_ms);
    backoff_ms = std::min(backoff_ms * 2, 2000);
  }
  for (const std::string& channel : channels_) {
    RETURN_IF_ERROR(SimpleCommand("LISTEN " + QuoteIdentifier(channel), false));
  }
  return Status::Ok();
}

bool Connection::Healthy() const {
  return conn_ != nullptr && !lost_ && PQstatus(conn_) == CONNECTION_OK;
}

int Connection::socket() const { return conn_ != nullptr ? PQsocket(conn_) : -1; }

int Connection::server_version() const { return conn_ != nullptr ? PQserverVersion(conn_) : 0; }

int Connection::backend_pid() const { return conn_ != nullptr ? PQbackendPID(conn_) : 0; }

Status Connection::EnsureReady() {
  if (Healthy()) return Status::Ok();
  if (txn_open_) {
    lost_ = true;
    return Status::Unavailable(
        fmt::format("{}: {} during a transaction (rolled back)", target_, kLostTag));
  }
  return Reset();
}

Status Connection::ConnError(std::string_view op) {
  std::string detail =
      conn_ != nullptr ? Scrub(OneLine(PQerrorMessage(conn_)), SecretsOf(options_.url)) : "";
  if (conn_ == nullptr || PQstatus(conn_) == CONNECTION_BAD) {
    lost_ = true;
    return Status::Unavailable(fmt::format("{}: {} to {}: {}", op, kLostTag, target_, detail));
  }
  return Status::Io(fmt::format("{}: {}", op, detail));
}

Status Connection::ResultError(pg_result* result, std::string_view op) {
  const char* state_c = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  std::string_view state = state_c != nullptr ? state_c : "";
  const char* primary =
      result != nullptr ? PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
  std::string detail = primary != nullptr ? OneLine(primary)
                       : conn_ != nullptr ? OneLine(PQerrorMessage(conn_))
                                          : std::string("no connection");
  detail = Scrub(std::move(detail), SecretsOf(options_.url));
  if (IsLostState(state) || conn_ == nullptr || PQstatus(conn_) == CONNECTION_BAD) {
    lost_ = true;
    return Status::Unavailable(
        WithState(fmt::format("{}: {} to {}: {}", op, kLostTag, target_, detail), state));
  }
  return StateError(state, op, detail);
}

Status Connection::SimpleCommand(std::string_view sql, bool allow_reset) {
  if (allow_reset) RETURN_IF_ERROR(EnsureReady());
  if (conn_ == nullptr) return Status::Unavailable(fmt::format("{}: {}", target_, kLostTag));
  std::string text(sql);
  PGresult* result = PQexec(conn_, text.c_str());
  ExecStatusType st = result != nullptr ? PQresultStatus(result) : PGRES_FATAL_ERROR;
  Status status;
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && st != PGRES_EMPTY_QUERY) {
    status = ResultError(result, fmt::format("exec `{}`", AbbreviateSql(sql)));
  }
  PQclear(result);
  return status;
}

Status Connection::Exec(std::string_view sql) { return SimpleCommand(sql, true); }

Result<Statement> Connection::Prepare(std::string_view sql) {
  int count = 0;
  std::string text = Rewrite(sql, &count);
  return Statement(this, std::move(text), count);
}

Result<std::string> Connection::PreparedName(const std::string& sql, int param_count) {
  auto it = prepared_.find(sql);
  if (it != prepared_.end()) return it->second;
  if (prepared_.size() >= kMaxPrepared) {
    RETURN_IF_ERROR(SimpleCommand("DEALLOCATE ALL", false));
    prepared_.clear();
  }
  std::string name = fmt::format("s{}", ++next_statement_);
  PGresult* result = PQprepare(conn_, name.c_str(), sql.c_str(), param_count, nullptr);
  ExecStatusType st = result != nullptr ? PQresultStatus(result) : PGRES_FATAL_ERROR;
  if (st != PGRES_COMMAND_OK) {
    Status status = ResultError(result, fmt::format("prepare `{}`", AbbreviateSql(sql)));
    PQclear(result);
    return status;
  }
  PQclear(result);
  prepared_.emplace(sql, name);
  return name;
}

Result<Transaction> Connection::Begin(Isolation isolation) {
  if (txn_open_) return Status::Internal("begin: a transaction is already open");
  std::string_view level = isolation == Isolation::kSerializable     ? "SERIALIZABLE"
                           : isolation == Isolation::kRepeatableRead ? "REPEATABLE READ"
                                                                     : "READ COMMITTED";
  RETURN_IF_ERROR(SimpleCommand(fmt::format("BEGIN ISOLATION LEVEL {}", level), true));
  txn_open_ = true;
  return Transaction(this, generation_);
}

Result<CopyWriter> Connection::CopyIn(std::string_view sql) {
  RETURN_IF_ERROR(EnsureReady());
  std::string text(sql);
  PGresult* result = PQexec(conn_, text.c_str());
  ExecStatusType st = result != nullptr ? PQresultStatus(result) : PGRES_FATAL_ERROR;
  if (st != PGRES_COPY_IN) {
    Status status = st == PGRES_FATAL_ERROR || st == PGRES_BAD_RESPONSE
                        ? ResultError(result, fmt::format("copy `{}`", AbbreviateSql(sql)))
                        : Status::InvalidArgument(fmt::format(
                              "copy `{}`: not a COPY ... FROM STDIN", AbbreviateSql(sql)));
    PQclear(result);
    while (PGresult* r = PQgetResult(conn_)) PQclear(r);
    return status;
  }
  PQclear(result);
  return CopyWriter(this);
}

Status Connection::Listen(std::string_view channel) {
  RETURN_IF_ERROR(Exec("LISTEN " + QuoteIdentifier(channel)));
  if (std::find(channels_.begin(), channels_.end(), channel) == channels_.end()) {
    channels_.emplace_back(channel);
  }
  return Status::Ok();
}

Status Connection::Unlisten(std::string_view channel) {
  channels_.erase(std::remove(channels_.begin(), channels_.end(), channel), channels_.end());
  return Exec("UNLISTEN " + QuoteIdentifier(channel));
}

Status Connection::Notify(std::string_view channel, std::string_view payload) {
  ASSIGN_OR_RETURN(Statement stmt, Query("SELECT pg_notify($1, $2)", channel, payload));
  return stmt.Run().status();
}

Result<std::vector<Notification>> Connection::WaitNotifications(int timeout_ms, int cancel_fd) {
  RETURN_IF_ERROR(EnsureReady());
  std::vector<Notification> out;
  auto collect = [&]() -> Status {
    if (PQconsumeInput(conn_) != 1 || PQstatus(conn_) == CONNECTION_BAD) {
      return ConnError("wait for notifications");
    }
    while (PGnotify* n = PQnotifies(conn_)) {
      out.push_back(Notification{n->relname != nullptr ? n->relname : "",
                                 n->extra != nullptr ? n->extra : "", n->be_pid});
      PQfreemem(n);
    }
    return Status::Ok();
  };
  RETURN_IF_ERROR(collect());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (out.empty() && timeout_ms != 0) {
    int wait = -1;
    if (timeout_ms > 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      wait = static_cast<int>(left.count());
    }
    pollfd fds[2] = {{PQsocket(conn_), POLLIN, 0}, {cancel_fd, POLLIN, 0}};
    int rc = poll(fds, cancel_fd >= 0 ? 2 : 1, wait);
    if (rc < 0) {
      if (errno == EINTR) continue;
      return Status::Io(fmt::format("wait for notifications: poll: {}", std::strerror(errno)));
    }
    if (cancel_fd >= 0 && (fds[1].revents & POLLIN) != 0) break;
    if (rc > 0) RETURN_IF_ERROR(collect());
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// RunTransaction

Status RunTransaction(Connection& conn, const std::function<Status()>& fn, Isolation isolation,
                      int max_attempts) {
  thread_local std::minstd_rand jitter(std::random_device{}());
  Status last;
  for (int attempt = 0; attempt < std::max(1, max_attempts); ++attempt) {
    if (attempt > 0) {
      int base = 10 << std::min(attempt - 1, 8);
      Sleep(base + static_cast<int>(jitter() % static_cast<unsigned>(base)));
    }
    Result<Transaction> txn = conn.Begin(isolation);
    if (!txn.ok()) {
      last = txn.status();
      if (IsConnectionLost(last) && !conn.in_transaction()) continue;
      return last;
    }
    last = fn();
    if (last.ok()) {
      last = txn->Commit();
      if (last.ok() || IsCommitOutcomeUnknown(last)) return last;
    } else {
      (void)txn->Rollback();
    }
    if (!IsRetryable(last) && !IsConnectionLost(last)) return last;
  }
  return last;
}

// ---------------------------------------------------------------------------------------------
// Pool

Pool::Pool(ConnectOptions options, int max_size)
    : options_(std::move(options)), max_size_(std::max(1, max_size)) {}

Pool::~Pool() = default;

Pool::Lease::~Lease() {
  if (pool_ != nullptr && conn_ != nullptr) pool_->Return(std::move(conn_));
}

int Pool::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return open_;
}

Result<Pool::Lease> Pool::Acquire(int wait_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  while (true) {
    while (!idle_.empty()) {
      std::unique_ptr<Connection> conn = std::move(idle_.back());
      idle_.pop_back();
      if (conn->Healthy()) return Lease(this, std::move(conn));
      --open_;  // dropped; a new one may be opened below
    }
    if (open_ < max_size_) {
      ++open_;
      lock.unlock();
      Result<std::unique_ptr<Connection>> conn = Connection::Open(options_);
      lock.lock();
      if (!conn.ok()) {
        --open_;
        cv_.notify_one();
        return conn.status();
      }
      return Lease(this, std::move(*conn));
    }
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && idle_.empty() &&
        open_ >= max_size_) {
      return Status::Unavailable(
          fmt::format("{}: connection pool exhausted ({} connections in use)",
                      RedactUrl(options_.url), max_size_));
    }
  }
}

void Pool::Return(std::unique_ptr<Connection> conn) {
  std::lock_guard<std::mutex> lock(mu_);
  if (conn->Healthy() && !conn->in_transaction()) {
    idle_.push_back(std::move(conn));
  } else {
    --open_;
  }
  cv_.notify_one();
}

}  // namespace trove::base::pg
