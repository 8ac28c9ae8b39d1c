# `json: native` end to end (docs/types.md): MariaDB JSON columns as ClickHouse JSON through the
# snapshot, streaming, ADD and MODIFY COLUMN and verify on the embedded store; refused at start on
# ClickHouse 18.16.
chsync_test(json_native_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/json_native_test.cpp
  DEPS chsync_pipe_compare chsync_test_env
  LABELS integration)
if(TARGET json_native_test)
  add_dependencies(json_native_test chsync)
endif()
