# Issue 18: `chsync verify` end to end on both destinations (docs/verify.md).
chsync_test(verify_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/verify_test.cpp
  DEPS chsync_pipe_compare chsync_test_env chsync_mysql
  LABELS integration)
if(TARGET verify_integration_test)
  add_dependencies(verify_integration_test chsync)
endif()
