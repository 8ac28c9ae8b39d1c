# Type changes checked live: every value of a MySQL type, converted as the pipe would after a
# MODIFY (policy/type_change.h decides), against a real server.
chsync_test(type_change_live_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/type_change_live_test.cpp
  DEPS chsync_pipe chsync_test_env LABELS integration)
