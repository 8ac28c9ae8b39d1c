# table_options' `deletes:` and `history:` end to end (docs/mapping.md): an append-only table through
# inserts, updates, deletes and TRUNCATE; a history table through every change and schema change, and
# its rows once each across kill -9.
chsync_test(delete_modes_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/delete_modes_test.cpp
  DEPS chsync_pipe_compare chsync_test_env
  LABELS integration)
if(TARGET delete_modes_test)
  add_dependencies(delete_modes_test chsync)
endif()
