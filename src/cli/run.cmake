# `chsync run` and `chsync resync` (issue 6): the pipe.
target_sources(chsync PRIVATE ${CMAKE_CURRENT_LIST_DIR}/run_command.cpp)
target_link_libraries(chsync PRIVATE chsync_config chsync_pipe)
