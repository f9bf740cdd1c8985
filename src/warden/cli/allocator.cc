// The warden binary's allocator settings (docs/decisions/0040-warden-jemalloc.md).
//
// The binary links jemalloc (Debian's libjemalloc2) when CMake finds it and the build has no
// sanitizer. jemalloc reads this string at its first allocation, before main: `thp:always`
// advises transparent huge pages on the memory it maps (the host's THP mode is `madvise`), so
// an ffmpeg-core ingest touches ~3,900 pages instead of ~14,400 (each first touch is a page
// fault); `metadata_thp:auto` does the same for its own metadata once it is large;
// `narenas:1` keeps one arena (each thread still has its cache) instead of eight on two
// cores, so the decode threads, the row encoder and SQLite reuse each other's freed pages
// rather than touching new ones (~8 % less wall time on an ffmpeg-core ingest).
extern "C" {
// NOLINTNEXTLINE: the name and type are jemalloc's contract (man 3 jemalloc, "malloc_conf").
extern const char* malloc_conf;
const char* malloc_conf = "thp:always,metadata_thp:auto,narenas:1";
}
