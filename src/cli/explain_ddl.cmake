# `chsync explain-ddl` (issue 4): parses MySQL DDL and prints the schema changes it makes.
if(TARGET chsync_schema)
  target_sources(chsync PRIVATE ${CMAKE_CURRENT_LIST_DIR}/explain_ddl_command.cpp)
  target_link_libraries(chsync PRIVATE chsync_schema)
endif()
