# The write-ahead journal of the ClickHouse steps of a schema change (ddl_journal.h): a statement
# replayed after a crash skips the steps that ClickHouse already acknowledged.
target_sources(chsync_pipe PRIVATE ${CMAKE_CURRENT_LIST_DIR}/ddl_journal.cpp)

chsync_test(ddl_journal_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/ddl_journal_test.cpp
  DEPS chsync_pipe)
