# The schema-change policies: what the pipe does about each kind of DDL, per table, from
# `schema_changes:` in the configuration file and --schema-policy (docs/configuration.md).
target_sources(chsync_pipe PRIVATE ${CMAKE_CURRENT_LIST_DIR}/schema_policy.cpp)

chsync_test(schema_policy_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/schema_policy_test.cpp
  DEPS chsync_pipe)
