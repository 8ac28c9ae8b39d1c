# Shared helpers for the module CMakeLists files.

set(CHSYNC_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wno-missing-field-initializers)

if(CHSYNC_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# chsync_library(NAME SOURCES... DEPS ...): one static library per module, named chsync_NAME.
function(chsync_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(chsync_${name} STATIC ${ARG_SOURCES})
  target_include_directories(chsync_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(chsync_${name} PRIVATE ${CHSYNC_WARNINGS})
  target_link_libraries(chsync_${name} PUBLIC ${ARG_DEPS})
endfunction()

# chsync_test(NAME SOURCES... DEPS ...): a GoogleTest binary registered with ctest.
# Unit tests are labelled "unit"; pass LABELS integration for tests that need servers. SERIAL: the
# test changes something every test sharing its servers would see (a global server variable), so
# ctest runs it alone. RESOURCE_LOCK NAME: its tests never run at the same time as other tests
# holding NAME (they stop servers those use).
function(chsync_test name)
  cmake_parse_arguments(ARG "SERIAL" "RESOURCE_LOCK" "SOURCES;DEPS;LABELS" ${ARGN})
  if(NOT CHSYNC_BUILD_TESTS)
    return()
  endif()
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  # A test's own code is compiled without optimization (after the build type's -O2): it calls the
  # libraries, which keep theirs, and compiles about 2.7 times faster (the largest test file: 22.5 s
  # at -O2, 8.4 s at -O0), where test files took three fifths of a whole build's compile time.
  target_compile_options(${name} PRIVATE ${CHSYNC_WARNINGS} -O0)
  target_compile_definitions(${name} PRIVATE
    CHSYNC_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    CHSYNC_BINARY_DIR="${PROJECT_BINARY_DIR}")
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  # The source root, for the headers tests share (common/test_util.h) when no library brings it.
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  set(serial FALSE)
  if(ARG_SERIAL)
    set(serial TRUE)
  endif()
  if(ARG_RESOURCE_LOCK)
    gtest_discover_tests(${name} PROPERTIES LABELS "${ARG_LABELS}" RUN_SERIAL ${serial}
      RESOURCE_LOCK ${ARG_RESOURCE_LOCK} DISCOVERY_TIMEOUT 60)
  else()
    gtest_discover_tests(${name} PROPERTIES LABELS "${ARG_LABELS}" RUN_SERIAL ${serial} DISCOVERY_TIMEOUT 60)
  endif()
endfunction()
