// Benchmark floor (not an MCP implementation): the least a stdio server can do and still pass
// bench/mcp_stdio_bench.mjs's strict validation of the echo workload. It finds "id", "method"
// and the "text" argument by string search (the harness sends compact JSON with plain ASCII
// text), writes canned envelopes around them, and does one read(2) per batch of lines and one
// write(2) per batch of replies, on one thread, with no allocation per call.
//
// What it measures is the cost that no server can avoid on this machine: process start through
// the dynamic loader, and the block, wake-up and pipe I/O of each call. Trove's figures are
// read against it (docs/performance.md). Anything beyond the harness's workload (escapes,
// nested "id" keys, other methods' params) is out of scope: unknown methods get -32601.
// C++ only by file name (the build's warning set is C++'s): no standard library beyond libc.
#include <string.h>
#include <unistd.h>

namespace {

constexpr size_t kIn = 1 << 16;
constexpr size_t kOut = 1 << 18;

char in_buf[kIn];
char out_buf[kOut];
size_t out_len;

void flush_out(void) {
  size_t done = 0;
  while (done < out_len) {
    ssize_t w = write(1, out_buf + done, out_len - done);
    if (w <= 0) _exit(1);
    done += static_cast<size_t>(w);
  }
  out_len = 0;
}

void put(const char* s, size_t n) {
  if (out_len + n > sizeof out_buf) flush_out();
  memcpy(out_buf + out_len, s, n);
  out_len += n;
}

void puts_lit(const char* s) { put(s, strlen(s)); }

// The raw JSON value after `"key":` in line[0..n), up to the next ',' or '}' (ids and methods
// in the harness's messages are numbers or strings without commas or braces).
const char* value_of(const char* line, size_t n, const char* key, size_t* len) {
  const char* p = static_cast<const char*>(memmem(line, n, key, strlen(key)));
  if (!p) return NULL;
  p += strlen(key);
  const char* end = p;
  while (end < line + n && *end != ',' && *end != '}') ++end;
  *len = static_cast<size_t>(end - p);
  return p;
}

void reply(const char* line, size_t n) {
  size_t id_len = 0;
  size_t method_len = 0;
  const char* id = value_of(line, n, "\"id\":", &id_len);
  const char* method = value_of(line, n, "\"method\":", &method_len);
  if (!id) return;  // a notification
  puts_lit("{\"jsonrpc\":\"2.0\",\"id\":");
  put(id, id_len);
  if (method && method_len == 12 && memcmp(method, "\"tools/call\"", 12) == 0) {
    size_t text_len = 0;
    const char* text = value_of(line, n, "\"text\":", &text_len);  // a quoted string
    if (!text || text_len < 2) {
      text = "\"\"";
      text_len = 2;
    }
    puts_lit(",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"{\\\"text\\\":\\\"");
    put(text + 1, text_len - 2);
    puts_lit("\\\"}\"}],\"structuredContent\":{\"text\":");
    put(text, text_len);
    puts_lit("}}}\n");
  } else if (method && method_len == 12 && memcmp(method, "\"initialize\"", 12) == 0) {
    puts_lit(
        ",\"result\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"tools\":{}},"
        "\"serverInfo\":{\"name\":\"floor-echo\",\"version\":\"0\"}}}\n");
  } else if (method && method_len == 12 && memcmp(method, "\"tools/list\"", 12) == 0) {
    puts_lit(
        ",\"result\":{\"tools\":[{\"name\":\"echo\",\"description\":\"Echoes its text argument\","
        "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},"
        "\"required\":[\"text\"]},\"outputSchema\":{\"type\":\"object\",\"properties\":{\"text\":"
        "{\"type\":\"string\"}},\"required\":[\"text\"]}}]}}\n");
  } else if (method && method_len == 6 && memcmp(method, "\"ping\"", 6) == 0) {
    puts_lit(",\"result\":{}}\n");
  } else {
    puts_lit(",\"error\":{\"code\":-32601,\"message\":\"method not found\"}}\n");
  }
}

}  // namespace

int main() {
  size_t have = 0;
  for (;;) {
    ssize_t r = read(0, in_buf + have, sizeof in_buf - have);
    if (r <= 0) break;
    have += static_cast<size_t>(r);
    size_t start = 0;
    for (;;) {
      const char* nl = static_cast<const char*>(memchr(in_buf + start, '\n', have - start));
      if (!nl) break;
      reply(in_buf + start, static_cast<size_t>(nl - (in_buf + start)));
      start = static_cast<size_t>(nl - in_buf) + 1;
    }
    flush_out();
    memmove(in_buf, in_buf + start, have - start);
    have -= start;
    if (have == sizeof in_buf) have = 0;  // a line longer than the buffer: dropped
  }
  return 0;
}
