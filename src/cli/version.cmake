# `chsync --version` (issue 19): the version, the git commit and the client libraries' versions.
# Run as a script (cmake -DSOURCE_DIR=… -DOUTPUT=… [-DCOMMIT=…] -P version.cmake) it writes
# OUTPUT, a header defining CHSYNC_GIT_COMMIT, and rewrites it only when the commit changed, so a
# build at the same commit relinks nothing. COMMIT (the cache variable CHSYNC_GIT_COMMIT, for
# builds from a tree without .git) wins over git.
if(CMAKE_SCRIPT_MODE_FILE)
  set(commit "${COMMIT}")
  if(commit STREQUAL "")
    execute_process(COMMAND git -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
      OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE failed)
    if(failed OR commit STREQUAL "")
      set(commit "unknown")
    else()
      execute_process(COMMAND git -C "${SOURCE_DIR}" diff --quiet HEAD -- RESULT_VARIABLE dirty ERROR_QUIET)
      if(dirty)
        string(APPEND commit "-dirty")
      endif()
    endif()
  endif()
  set(text "#pragma once\n#define CHSYNC_GIT_COMMIT \"${commit}\"\n")
  if(EXISTS "${OUTPUT}")
    file(READ "${OUTPUT}" old)
  endif()
  if(NOT old STREQUAL text)
    file(WRITE "${OUTPUT}" "${text}")
  endif()
  return()
endif()

set(CHSYNC_GIT_COMMIT "" CACHE STRING "commit shown by chsync --version (empty: ask git at build time)")
set(chsync_commit_header ${CMAKE_CURRENT_BINARY_DIR}/generated/chsync_git_commit.h)
add_custom_target(chsync_git_commit
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DOUTPUT=${chsync_commit_header}
    -DCOMMIT=${CHSYNC_GIT_COMMIT} -P ${CMAKE_CURRENT_LIST_FILE}
  BYPRODUCTS ${chsync_commit_header}
  VERBATIM)
target_sources(chsync PRIVATE ${CMAKE_CURRENT_LIST_DIR}/version.cpp)
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/version.cpp PROPERTIES
  INCLUDE_DIRECTORIES ${CMAKE_CURRENT_BINARY_DIR}/generated)
add_dependencies(chsync chsync_git_commit)
target_link_libraries(chsync PRIVATE chsync_clickhouse PkgConfig::MARIADB PkgConfig::ZSTD CURL::libcurl)
