# Helpers that declare Trove's libraries, tests, fuzzers and benchmarks, so that every
# target gets the same warnings, include root and sanitizer flags.

set(TROVE_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align
    -Woverloaded-virtual -Wimplicit-fallthrough
    # Designated initializers that omit members are the convention (ToolSpec{.name = ...}).
    -Wno-missing-field-initializers)
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  list(APPEND TROVE_WARNINGS -Wthread-safety)
endif()
if(TROVE_WERROR)
  list(APPEND TROVE_WARNINGS -Werror)
endif()

set(TROVE_SAN_FLAGS)
if(TROVE_SANITIZE)
  set(TROVE_SAN_FLAGS -fsanitize=address,undefined -fno-omit-frame-pointer
      -fno-sanitize-recover=undefined)
endif()

# With fuzzers on, every target is compiled with coverage instrumentation (not only the fuzzer's
# own file), or libFuzzer would be blind inside the libraries it exercises. The sanitizer
# runtime linked into the other binaries supplies the coverage callbacks.
set(TROVE_COVERAGE_FLAGS)
if(TROVE_FUZZ)
  set(TROVE_COVERAGE_FLAGS -fsanitize=fuzzer-no-link)
endif()

function(trove_apply_common target)
  target_compile_options(${target} PRIVATE ${TROVE_WARNINGS} ${TROVE_SAN_FLAGS}
                                           ${TROVE_COVERAGE_FLAGS})
  # --as-needed drops shared libraries a binary never calls (a stdio server need not load
  # libcrypto or libsqlite3 just because trove_base can use them): less startup and RSS.
  target_link_options(${target} PRIVATE ${TROVE_SAN_FLAGS} -Wl,--as-needed)
endfunction()

# trove_library(NAME SRCS a.cc b.cc DEPS lib...)
function(trove_library name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SRCS})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  trove_apply_common(${name})
endfunction()

# trove_test(NAME SRCS a_test.cc DEPS lib...): one GoogleTest binary, run by ctest.
function(trove_test name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SRCS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  trove_apply_common(${name})
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES TIMEOUT 600)
endfunction()

# trove_fuzzer(NAME SRCS x_fuzzer.cc DEPS lib... RUNS N [MAX_LEN BYTES] [CORPUS dir...]): a
# libFuzzer target (clang, TROVE_FUZZ) plus a ctest smoke run of RUNS iterations over its seed
# corpus, with inputs of at most MAX_LEN bytes (default 8192; larger where an input must be long
# to be deep). The seeds are fuzz/corpus/NAME, or the CORPUS directories (relative to the source
# root) when given.
function(trove_fuzzer name)
  cmake_parse_arguments(ARG "" "RUNS;MAX_LEN" "SRCS;DEPS;CORPUS" ${ARGN})
  if(NOT TROVE_FUZZ)
    return()
  endif()
  add_executable(${name} ${ARG_SRCS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
  trove_apply_common(${name})
  target_compile_options(${name} PRIVATE -fsanitize=fuzzer)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  if(NOT ARG_RUNS)
    set(ARG_RUNS 20000)
  endif()
  if(NOT ARG_MAX_LEN)
    set(ARG_MAX_LEN 8192)
  endif()
  set(corpus ${PROJECT_SOURCE_DIR}/fuzz/corpus/${name})
  if(ARG_CORPUS)
    list(TRANSFORM ARG_CORPUS PREPEND ${PROJECT_SOURCE_DIR}/ OUTPUT_VARIABLE corpus)
  endif()
  # libFuzzer writes new inputs into the first corpus directory, so that one lives in the build
  # tree and the committed seeds come second, read-only.
  set(scratch ${CMAKE_CURRENT_BINARY_DIR}/${name}_corpus)
  file(MAKE_DIRECTORY ${scratch})
  add_test(NAME ${name}_smoke
           COMMAND ${name} -runs=${ARG_RUNS} -seed=1 -max_len=${ARG_MAX_LEN} -rss_limit_mb=1024
                   -timeout=10 ${scratch} ${corpus})
  set_tests_properties(${name}_smoke PROPERTIES TIMEOUT 300)
endfunction()

# trove_bench(NAME SRCS ... DEPS ...)
function(trove_bench name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SRCS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
  trove_apply_common(${name})
endfunction()

# trove_pg_fixture(): once, at the top level. Declares the ctest fixture "pg": pg_start runs
# scripts/pg_scratch start in <build>/pgscratch before any test that requires it (one cluster
# per build directory, so release and asan trees never share one) and pg_stop stops it after
# the last. When pg_start fails, ctest does not run the tests that require it and reports
# them as failed: a missing server fails the run, it never skips tests.
function(trove_pg_fixture)
  set(dir ${CMAKE_BINARY_DIR}/pgscratch)
  add_test(NAME pg_start COMMAND ${PROJECT_SOURCE_DIR}/scripts/pg_scratch start ${dir})
  set_tests_properties(pg_start PROPERTIES FIXTURES_SETUP pg TIMEOUT 180)
  add_test(NAME pg_stop COMMAND ${PROJECT_SOURCE_DIR}/scripts/pg_scratch stop ${dir})
  set_tests_properties(pg_stop PROPERTIES FIXTURES_CLEANUP pg TIMEOUT 180)
endfunction()

# trove_pg_test(NAME SRCS a_test.cc DEPS lib... [RESOURCE_LOCK lock]): trove_test on the "pg"
# fixture. The test finds the server through TROVE_PG_ENV (the env file pg_scratch writes; read
# by src/base/testing/pg_server.h) and can start a private server of its own (for restart and
# crash tests) with TROVE_PG_SCRATCH, the path of scripts/pg_scratch.
function(trove_pg_test name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS;RESOURCE_LOCK" ${ARGN})
  trove_test(${name} SRCS ${ARG_SRCS} DEPS ${ARG_DEPS})
  set_tests_properties(${name} PROPERTIES
    FIXTURES_REQUIRED pg
    ENVIRONMENT "TROVE_PG_ENV=${CMAKE_BINARY_DIR}/pgscratch/env;TROVE_PG_SCRATCH=${PROJECT_SOURCE_DIR}/scripts/pg_scratch")
  if(ARG_RESOURCE_LOCK)
    set_tests_properties(${name} PROPERTIES RESOURCE_LOCK "${ARG_RESOURCE_LOCK}")
  endif()
endfunction()
