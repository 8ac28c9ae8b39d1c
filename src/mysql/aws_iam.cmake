# Issue 37: AWS IAM database authentication for RDS and Aurora sources (auth=aws_iam): the token
# signed here with SigV4 (OpenSSL), the credentials taken the way AWS SDKs take them.
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
target_sources(chsync_mysql PRIVATE ${CMAKE_CURRENT_LIST_DIR}/aws_sigv4.cpp
                                    ${CMAKE_CURRENT_LIST_DIR}/aws_credentials.cpp)
target_link_libraries(chsync_mysql PRIVATE OpenSSL::Crypto)

chsync_test(aws_iam_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/aws_iam_test.cpp
  DEPS chsync_mysql)
