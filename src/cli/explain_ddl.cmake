# `chsync explain-ddl` (issue 4): parses MySQL DDL and prints the schema changes it makes; with
# --clickhouse-version, what the pipe would do in ClickHouse (policy/ddl_policy.h).
if(TARGET chsync_schema AND TARGET chsync_pipe)
  target_sources(chsync PRIVATE ${CMAKE_CURRENT_LIST_DIR}/explain_ddl_command.cpp)
  target_link_libraries(chsync PRIVATE chsync_schema chsync_config chsync_pipe)

  # Runs the built binary (the policy itself is unit-tested in src/pipe/ddl_policy_test.cpp).
  chsync_test(explain_ddl_policy_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/explain_ddl_policy_test.cpp)
  if(TARGET explain_ddl_policy_test)
    target_compile_definitions(explain_ddl_policy_test PRIVATE CHSYNC_BINARY="$<TARGET_FILE:chsync>")
    add_dependencies(explain_ddl_policy_test chsync)
  endif()
endif()
