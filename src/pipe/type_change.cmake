# What a column type change (MODIFY/CHANGE) means for the rows already in ClickHouse.
target_sources(chsync_pipe PRIVATE ${CMAKE_CURRENT_LIST_DIR}/type_change.cpp)

chsync_test(type_change_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/type_change_test.cpp DEPS chsync_pipe)
chsync_test(type_change_live_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/type_change_live_test.cpp
  DEPS chsync_pipe chsync_test_env LABELS integration)
