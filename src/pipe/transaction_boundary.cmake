# Transaction boundaries and resume positions (pure), and the prepared-XA rows store.
target_sources(chsync_pipe PRIVATE ${CMAKE_CURRENT_LIST_DIR}/transaction_boundary.cpp
                                   ${CMAKE_CURRENT_LIST_DIR}/xa_store.cpp)
find_package(ZLIB REQUIRED)
target_link_libraries(chsync_pipe PRIVATE ZLIB::ZLIB)

chsync_test(transaction_boundary_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/transaction_boundary_test.cpp ${CMAKE_CURRENT_LIST_DIR}/xa_store_test.cpp
  DEPS chsync_pipe)
