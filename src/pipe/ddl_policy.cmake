# The schema-change policy: what the pipe does in ClickHouse about each source DDL
# (docs/schema-changes.md).
target_sources(chsync_pipe PRIVATE ${CMAKE_CURRENT_LIST_DIR}/ddl_policy.cpp)

chsync_test(ddl_policy_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/ddl_policy_test.cpp
  DEPS chsync_pipe)
