# `chsync tail` (issue 3): streams a live server's binlog through the decoder's printer.
# Joins the build once the binlog module (src/binlog/CMakeLists.txt) exists.
if(TARGET chsync_binlog)
  target_sources(chsync PRIVATE ${CMAKE_CURRENT_LIST_DIR}/tail_command.cpp)
  target_link_libraries(chsync PRIVATE chsync_mysql chsync_binlog)
endif()

# src/mysql/live_types_test.cpp runs the chsync binary (`chsync tail --format json`).
if(TARGET live_types_test)
  add_dependencies(live_types_test chsync)
endif()
