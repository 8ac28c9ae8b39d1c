# (Named to sort after pipe_e2e.cmake, which defines chsync_pipe_compare.)
# `chsync run` end to end with MariaDB 5.3 hires TIME/DATETIME/TIMESTAMP columns
# (mysql56_temporal_format=OFF), into both destinations.
if(TARGET chsync_pipe_compare)
  chsync_test(hires_temporal_e2e_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/hires_temporal_e2e_test.cpp
    DEPS chsync_pipe_compare chsync_test_env chsync_mysql
    LABELS integration
    # Sets the global mysql56_temporal_format OFF for a moment: no other test may create tables then.
    SERIAL)
  add_dependencies(hires_temporal_e2e_test chsync)
endif()
