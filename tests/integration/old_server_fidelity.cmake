# Dates and times on ClickHouse 18.16 (no DateTime64): datetime_fallback: string keeps fractions
# as exact text, the default counts clamped dates in the log, and `chsync check` warns per column
# (docs/types.md).
chsync_test(old_server_fidelity_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/old_server_fidelity_test.cpp
  DEPS chsync_pipe_compare chsync_test_env
  LABELS integration)
if(TARGET old_server_fidelity_test)
  add_dependencies(old_server_fidelity_test chsync)
endif()
