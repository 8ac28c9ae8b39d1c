# Issue 16 end to end: `chsync run --http` scraped by Debian's Prometheus, probed with curl, its
# status page rendered by a headless Chromium, the embedded store queried while the pipe runs.
find_package(nlohmann_json REQUIRED)
chsync_test(observe_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/observe_test.cpp
  DEPS chsync_pipe_compare chsync_test_env chsync_mysql nlohmann_json::nlohmann_json
  LABELS integration)
if(TARGET observe_test)
  add_dependencies(observe_test chsync)
endif()
