# Issue 18, "Secrets", with real servers: two comma-separated --source URLs replicate, and what
# MariaDB and ClickHouse echo back never shows a password (the rest: src/cli/secrets_cli_test.cpp).
chsync_test(secrets_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/secrets_test.cpp
  DEPS chsync_pipe_compare chsync_test_env chsync_mysql
  LABELS integration)
if(TARGET secrets_test)
  add_dependencies(secrets_test chsync)
endif()
