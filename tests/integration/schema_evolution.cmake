# Issue 7 end to end: schema changes followed by `chsync run` (renames, type widening, online
# rebuilds, TRUNCATE, CREATE/DROP/RENAME TABLE, gh-ost and pt-online-schema-change swaps, ordinal
# mode, key changes, per-table policies) against both destinations, each scenario checked by
# comparing the source with the destination's FINAL view value for value (pipe_compare, from
# pipe_e2e.cmake).
chsync_test(schema_evolution_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/schema_evolution_test.cpp
  DEPS chsync_pipe_compare chsync_test_env chsync_mysql
  LABELS integration)
if(TARGET schema_evolution_test)
  add_dependencies(schema_evolution_test chsync)
endif()
