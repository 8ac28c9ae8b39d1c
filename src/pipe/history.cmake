# table_options' `history: true` (issue 35): the `<dest_table>_history` table of every row change.
target_sources(chsync_pipe PRIVATE ${CMAKE_CURRENT_LIST_DIR}/history.cpp)
