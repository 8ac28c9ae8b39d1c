# table_options' `deletes:` end to end (docs/mapping.md): an append-only table through
# inserts, updates, deletes and TRUNCATE.
chsync_test(delete_modes_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/delete_modes_test.cpp
  DEPS chsync_pipe_compare chsync_test_env
  LABELS integration)
if(TARGET delete_modes_test)
  add_dependencies(delete_modes_test chsync)
endif()
