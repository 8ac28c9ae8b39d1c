# partial_rows_fuzzer: libFuzzer target for the PARTIAL_ROW_DATA reassembler (needs clang).
#   CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCHSYNC_BUILD_FUZZ=ON -DCHSYNC_BUILD_TESTS=OFF
#   ninja -C build-fuzz partial_rows_fuzzer
#   build-fuzz/fuzz/partial_rows_fuzzer -max_len=4096 -max_total_time=60
# (The decoder's PARTIAL_ROW_DATA handling is also reached by binlog_decoder_fuzzer.)
add_executable(partial_rows_fuzzer ${CMAKE_CURRENT_LIST_DIR}/partial_rows_fuzzer.cpp)
target_compile_options(partial_rows_fuzzer PRIVATE -fsanitize=fuzzer,address,undefined)
target_link_options(partial_rows_fuzzer PRIVATE -fsanitize=fuzzer,address,undefined)
target_link_libraries(partial_rows_fuzzer PRIVATE chsync_binlog)
