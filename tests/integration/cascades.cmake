# Foreign-key cascades followed in ClickHouse (issue 33, case 9; src/pipe/cascades.h).
chsync_test(cascades_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/cascades_test.cpp
  DEPS chsync_pipe_compare chsync_test_env
  LABELS integration)
if(TARGET cascades_integration_test)
  add_dependencies(cascades_integration_test chsync)
endif()
