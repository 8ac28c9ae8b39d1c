# `chsync decode` (issue 3): prints the events of binlog files through the binlog decoder.
target_sources(chsync PRIVATE ${CMAKE_CURRENT_LIST_DIR}/decode_command.cpp)
target_link_libraries(chsync PRIVATE chsync_binlog)

# The test runs the built binary on the fixtures; its source lives with the decoder.
if(CHSYNC_BUILD_TESTS)
  find_package(nlohmann_json REQUIRED)
  chsync_test(decode_cli_test
    SOURCES ${PROJECT_SOURCE_DIR}/src/binlog/decode_cli_test.cpp
    DEPS nlohmann_json::nlohmann_json)
  target_compile_definitions(decode_cli_test PRIVATE CHSYNC_BINARY="$<TARGET_FILE:chsync>")
  add_dependencies(decode_cli_test chsync)
endif()
