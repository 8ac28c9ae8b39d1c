# xa_fuzzer: libFuzzer target for what the pipe parses of XA transactions: the XA id of an XA
# statement read from the binlog (ParseXaId, via TransactionBoundaries) and a prepared-XA rows file
# read back from the state directory (DecodeXaRows). Needs clang:
#   CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCHSYNC_BUILD_FUZZ=ON -DCHSYNC_BUILD_TESTS=OFF
#   ninja -C build-fuzz xa_fuzzer && build-fuzz/fuzz/xa_fuzzer -max_len=4096 -max_total_time=60
add_executable(xa_fuzzer ${CMAKE_CURRENT_LIST_DIR}/xa_fuzzer.cpp)
target_compile_options(xa_fuzzer PRIVATE -fsanitize=fuzzer,address,undefined)
target_link_options(xa_fuzzer PRIVATE -fsanitize=fuzzer,address,undefined)
target_link_libraries(xa_fuzzer PRIVATE chsync_pipe)
