# What a user gets: the version line of every binary, `cmake --install` (the binaries, a man page
# and bash and zsh completions per CLI) and `cpack -G DEB` (a .deb with its shared-library
# dependencies declared). Included at the end of the top CMakeLists.txt, once every target exists.
# scripts/check_package (ctest package_deb) builds the package, unpacks it and runs each binary.

include(GNUInstallDirs)

# The binaries a user runs. warden execs warden-net, installed beside it, for agent, mcp and
# config (docs/decisions/0043-warden-lean-cli.md); kodo and kodoc are one program under two names.
set(TROVE_PROGRAMS warden warden-net kodoc kodo kodo-mcp librarian)
# The CLIs with a man page and completions (warden-net is warden's other half, not a command).
set(TROVE_DOCUMENTED_CLIS warden kodoc kodo kodo-mcp librarian)

# --- Version: library trove_version (trove_version.h: trove::VersionFull() and friends) --------
# Generated at configure time and refreshed on every build (cmake/version.cmake rewrites a file
# only when the commit changed), so --version names the commit the binary was built from; a new
# commit recompiles one one-line .cc and relinks.
set(TROVE_GENERATED_DIR ${CMAKE_BINARY_DIR}/generated)
set(trove_version_args -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DOUTPUT_DIR=${TROVE_GENERATED_DIR}
    -DVERSION=${PROJECT_VERSION})
execute_process(COMMAND ${CMAKE_COMMAND} ${trove_version_args}
                        -P ${PROJECT_SOURCE_DIR}/cmake/version.cmake)
add_custom_target(trove_version_files
  COMMAND ${CMAKE_COMMAND} ${trove_version_args} -P ${PROJECT_SOURCE_DIR}/cmake/version.cmake
  BYPRODUCTS ${TROVE_GENERATED_DIR}/trove_version.cc ${TROVE_GENERATED_DIR}/trove_version.h
  VERBATIM)
add_library(trove_version STATIC ${TROVE_GENERATED_DIR}/trove_version.cc)
target_include_directories(trove_version PUBLIC ${TROVE_GENERATED_DIR})
add_dependencies(trove_version trove_version_files)
trove_apply_common(trove_version)
# kodoc, kodo and kodo-mcp print the line made by VersionText in trove_kodo_cli.
foreach(target ${TROVE_PROGRAMS} trove_kodo_cli)
  if(TARGET ${target})
    target_link_libraries(${target} PRIVATE trove_version)
  endif()
endforeach()

# --- Man pages and completions, generated from each CLI's --help (scripts/cli_docs) -----------
# Not in sanitizer or fuzzer trees, whose binaries are not installed (and would run instrumented).
if(TROVE_SANITIZE OR TROVE_FUZZ)
  set(trove_docs_default OFF)
else()
  set(trove_docs_default ON)
endif()
option(TROVE_CLI_DOCS "Generate and install man pages and shell completions" ${trove_docs_default})

set(TROVE_DOCS_DIR ${CMAKE_BINARY_DIR}/cli-docs)
set(trove_man_pages)
set(trove_bash_completions)
set(trove_zsh_completions)
if(TROVE_CLI_DOCS)
  foreach(cli ${TROVE_DOCUMENTED_CLIS})
    if(NOT TARGET ${cli})
      continue()
    endif()
    set(man ${TROVE_DOCS_DIR}/man1/${cli}.1)
    set(bash ${TROVE_DOCS_DIR}/bash-completion/${cli})
    set(zsh ${TROVE_DOCS_DIR}/zsh/_${cli})
    set(deps ${cli})
    if(cli STREQUAL "warden" AND TARGET warden-net)
      list(APPEND deps warden-net)  # `warden agent --help` runs warden-net
    endif()
    add_custom_command(
      OUTPUT ${man} ${bash} ${zsh}
      COMMAND ${PROJECT_SOURCE_DIR}/scripts/cli_docs $<TARGET_FILE:${cli}> ${TROVE_DOCS_DIR} ${cli}
      DEPENDS ${deps} ${PROJECT_SOURCE_DIR}/scripts/cli_docs
      COMMENT "Generating the man page and completions of ${cli}"
      VERBATIM)
    list(APPEND trove_man_pages ${man})
    list(APPEND trove_bash_completions ${bash})
    list(APPEND trove_zsh_completions ${zsh})
  endforeach()
  add_custom_target(trove_cli_docs ALL
    DEPENDS ${trove_man_pages} ${trove_bash_completions} ${trove_zsh_completions})
endif()

# --- cmake --install --------------------------------------------------------------------------
set(trove_installed)
foreach(target ${TROVE_PROGRAMS})
  if(TARGET ${target})
    list(APPEND trove_installed ${target})
  endif()
endforeach()
install(TARGETS ${trove_installed} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TROVE_CLI_DOCS)
  install(FILES ${trove_man_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  # bash-completion loads <datadir>/bash-completion/completions/<command> on first use.
  install(FILES ${trove_bash_completions}
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/bash-completion/completions)
  # zsh: a package for /usr puts completions in Debian's vendor-completions; any other prefix
  # (/usr/local) in site-functions, which zsh's default fpath has. Decided when installing, since
  # cpack installs under /usr whatever the prefix was at configure time.
  install(CODE "
    if(CMAKE_INSTALL_PREFIX MATCHES \"(^|/)usr/?$\")
      set(trove_zsh_dir \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATAROOTDIR}/zsh/vendor-completions\")
    else()
      set(trove_zsh_dir \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATAROOTDIR}/zsh/site-functions\")
    endif()
    file(INSTALL ${trove_zsh_completions} DESTINATION \"\${trove_zsh_dir}\"
         FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
  ")
endif()

# --- cpack -G DEB -----------------------------------------------------------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME trove)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "MCP servers for wasm reverse engineering (WARDEN), the Kodo language and repository knowledge (Librarian)")
set(CPACK_PACKAGE_DESCRIPTION
    "Trove is three MCP servers on one MCP protocol core: WARDEN, a WebAssembly reverse-engineering knowledge base (warden); Kodo, a compiler front end for the Kodo language with contracts checked by Z3 (kodoc, kodo-mcp); and Librarian, a repository knowledge index with ranked retrieval (librarian). Each serves MCP over stdio or Streamable HTTP.")
set(CPACK_PACKAGE_CONTACT "Trove maintainers <trove@example.org>")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CPACK_PACKAGE_CONTACT}")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
# Depends: from the binaries' shared libraries (dpkg-shlibdeps), so it follows the link lines.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Librarian falls back to universal-ctags for languages without a tree-sitter grammar.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "universal-ctags")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "bash-completion")
include(CPack)

if(TROVE_CLI_DOCS)
  add_test(NAME package_deb
           COMMAND ${PROJECT_SOURCE_DIR}/scripts/check_package ${CMAKE_BINARY_DIR})
  set_tests_properties(package_deb PROPERTIES TIMEOUT 600)
endif()
