# Per-table mapping and ClickHouse table options (`table_options:`, docs/mapping.md): destination
# names, excluded and renamed columns, ORDER BY and the other table options, adoption of existing
# tables.
target_sources(chsync_pipe PRIVATE ${CMAKE_CURRENT_LIST_DIR}/mapping.cpp ${CMAKE_CURRENT_LIST_DIR}/adopt.cpp)

chsync_test(mapping_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/mapping_test.cpp ${CMAKE_CURRENT_LIST_DIR}/adopt_test.cpp
  DEPS chsync_pipe)
