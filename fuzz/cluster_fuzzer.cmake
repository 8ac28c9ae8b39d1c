# cluster_fuzzer: libFuzzer target for the cluster answers chsync parses (clickhouse/cluster.h:
# system.clusters rows, a DDL task's finished hosts, a Code 159 message, URL lists). Needs clang:
#   CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCHSYNC_BUILD_FUZZ=ON -DCHSYNC_BUILD_TESTS=OFF
#   ninja -C build-fuzz cluster_fuzzer && build-fuzz/fuzz/cluster_fuzzer -max_len=4096 -max_total_time=60
add_executable(cluster_fuzzer ${CMAKE_CURRENT_LIST_DIR}/cluster_fuzzer.cpp)
target_compile_options(cluster_fuzzer PRIVATE -fsanitize=fuzzer,address,undefined)
target_link_options(cluster_fuzzer PRIVATE -fsanitize=fuzzer,address,undefined)
target_link_libraries(cluster_fuzzer PRIVATE chsync_clickhouse)
