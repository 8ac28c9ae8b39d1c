# binlog_decoder_fuzzer: libFuzzer target for the binlog decoder (needs clang).
#   CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCHSYNC_BUILD_FUZZ=ON -DCHSYNC_BUILD_TESTS=OFF
#   ninja -C build-fuzz binlog_decoder_fuzzer
#   build-fuzz/fuzz/binlog_decoder_fuzzer -max_len=65536 CORPUS_DIR ../shared/fixtures/binlog
# Crashers it finds belong in tests/data/binlog/crashers/ (replayed by binlog_test).
add_executable(binlog_decoder_fuzzer ${CMAKE_CURRENT_LIST_DIR}/binlog_decoder_fuzzer.cpp)
target_compile_options(binlog_decoder_fuzzer PRIVATE -fsanitize=fuzzer,address,undefined)
target_link_options(binlog_decoder_fuzzer PRIVATE -fsanitize=fuzzer,address,undefined)
target_link_libraries(binlog_decoder_fuzzer PRIVATE chsync_binlog)
# Instrument the decoder itself for coverage and memory errors.
target_compile_options(chsync_binlog PRIVATE -fsanitize=fuzzer-no-link,address,undefined)
target_compile_options(chsync_common PRIVATE -fsanitize=fuzzer-no-link,address,undefined)
