# `chsync run` end to end: snapshot, streaming and schema changes from MariaDB into both
# destinations (ClickHouse 18.16 over HTTP and an embedded chDB store), checked by comparing the
# source with the destination's FINAL view value for value (pipe_compare).
add_library(chsync_pipe_compare STATIC ${CMAKE_CURRENT_LIST_DIR}/pipe_compare.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pipe_harness.cpp)
target_include_directories(chsync_pipe_compare PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_compile_options(chsync_pipe_compare PRIVATE ${CHSYNC_WARNINGS})
target_link_libraries(chsync_pipe_compare PUBLIC chsync_test_env chsync_mysql GTest::gtest)

# The test reads the checkpoint file itself (JSON) rather than linking chsync_pipe.
find_package(nlohmann_json REQUIRED)
chsync_test(pipe_e2e_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/pipe_e2e_test.cpp
  DEPS chsync_pipe_compare chsync_test_env chsync_mysql nlohmann_json::nlohmann_json
  LABELS integration)
if(TARGET pipe_e2e_test)
  add_dependencies(pipe_e2e_test chsync)
endif()
