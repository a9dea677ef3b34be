# Build types for the sanitizer runs:
#   -DCMAKE_BUILD_TYPE=asan   AddressSanitizer + UndefinedBehaviorSanitizer
#   -DCMAKE_BUILD_TYPE=tsan   ThreadSanitizer
set(_anvil_san_common "-O1 -g -fno-omit-frame-pointer")
set(CMAKE_CXX_FLAGS_ASAN "${_anvil_san_common} -fsanitize=address,undefined -fno-sanitize-recover=undefined")
set(CMAKE_C_FLAGS_ASAN "${CMAKE_CXX_FLAGS_ASAN}")
set(CMAKE_EXE_LINKER_FLAGS_ASAN "-fsanitize=address,undefined")
set(CMAKE_SHARED_LINKER_FLAGS_ASAN "-fsanitize=address,undefined")
set(CMAKE_CXX_FLAGS_TSAN "${_anvil_san_common} -fsanitize=thread")
set(CMAKE_C_FLAGS_TSAN "${CMAKE_CXX_FLAGS_TSAN}")
set(CMAKE_EXE_LINKER_FLAGS_TSAN "-fsanitize=thread")
set(CMAKE_SHARED_LINKER_FLAGS_TSAN "-fsanitize=thread")
