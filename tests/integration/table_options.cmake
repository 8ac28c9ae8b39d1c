# `table_options:` end to end: ORDER BY, PARTITION BY, TTL, SETTINGS and per-column CODEC and
# LowCardinality in every CREATE TABLE and ADD COLUMN the pipe runs, and the start-up checks
# (docs/mapping.md).
chsync_test(table_options_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/table_options_test.cpp
  DEPS chsync_pipe_compare chsync_test_env
  LABELS integration)
if(TARGET table_options_test)
  add_dependencies(table_options_test chsync)
endif()
