# No password in any output (issue 18, "Secrets"): runs the built binary's every command with wrong,
# unreachable and malformed URLs carrying distinctive passwords (no servers: closed loopback ports);
# chsync_pipe for the state directory it prepares.
chsync_test(secrets_cli_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/secrets_cli_test.cpp
  DEPS chsync_pipe)
if(TARGET secrets_cli_test)
  target_compile_definitions(secrets_cli_test PRIVATE CHSYNC_BINARY="$<TARGET_FILE:chsync>")
  add_dependencies(secrets_cli_test chsync)
endif()
