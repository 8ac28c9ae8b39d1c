# `chsync status` (issue 6): a pipe's state from its state directory.
target_sources(chsync PRIVATE ${CMAKE_CURRENT_LIST_DIR}/status_command.cpp)
target_link_libraries(chsync PRIVATE chsync_pipe)
