# `chsync status` (issue 6): a pipe's state from its state directory.
target_sources(chsync PRIVATE ${CMAKE_CURRENT_LIST_DIR}/status_command.cpp ${CMAKE_CURRENT_LIST_DIR}/status_text.cpp)
target_link_libraries(chsync PRIVATE chsync_pipe)

# The text of `chsync status` over checkpoints of many tables (no servers).
chsync_test(status_text_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/status_text_test.cpp ${CMAKE_CURRENT_LIST_DIR}/status_text.cpp
  DEPS chsync_pipe)
