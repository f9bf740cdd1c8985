# librarian_grammar_abi(PARSER_C MIN MAX OUT_VAR): reads `#define LANGUAGE_VERSION N` from a
# tree-sitter grammar's generated parser.c and fails the configuration unless MIN <= N <= MAX
# (docs/librarian.md §6.7: the build refuses a grammar outside the core's ABI range). Sets OUT_VAR
# to N.
#
# Script mode, for the ctest that proves the refusal:
#   cmake -DPARSER_C=<file> -DABI_MIN=13 -DABI_MAX=14 -P cmake/librarian_grammar_abi.cmake
function(librarian_grammar_abi parser_c min max out_var)
  if(NOT EXISTS ${parser_c})
    message(FATAL_ERROR "librarian: ${parser_c} is missing")
  endif()
  file(STRINGS ${parser_c} abi_line REGEX "^#define LANGUAGE_VERSION [0-9]+" LIMIT_COUNT 1)
  string(REGEX REPLACE "^#define LANGUAGE_VERSION ([0-9]+).*" "\\1" abi "${abi_line}")
  if(NOT abi MATCHES "^[0-9]+$" OR abi LESS min OR abi GREATER max)
    message(FATAL_ERROR "librarian: ${parser_c} has ABI '${abi}', outside the tree-sitter "
                        "core's ${min}..${max}; pin an ABI-14 grammar release (docs/librarian.md §6.7)")
  endif()
  set(${out_var} ${abi} PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE AND DEFINED PARSER_C)
  librarian_grammar_abi(${PARSER_C} ${ABI_MIN} ${ABI_MAX} abi)
  message(STATUS "ABI ${abi}")
endif()
