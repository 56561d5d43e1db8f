# Compiler, linker and warning settings shared by every target.

# The cache's base directory is the source tree, so that ccache hashes paths
# relative to it: every clone and worktree of the project shares the hits.
find_program(KF_CCACHE ccache)
if(KF_CCACHE)
  set(KF_CCACHE_LAUNCHER ${CMAKE_COMMAND} -E env
      CCACHE_BASEDIR=${CMAKE_SOURCE_DIR} ${KF_CCACHE})
  set(CMAKE_C_COMPILER_LAUNCHER ${KF_CCACHE_LAUNCHER})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${KF_CCACHE_LAUNCHER})
endif()

# lld links the static MLIR tools in well under a second where GNU ld takes several.
find_program(KF_LLD NAMES ld.lld)
if(KF_LLD)
  add_link_options(-fuse-ld=lld)
endif()

add_compile_options(-Wall -Wextra -Wno-unused-parameter)
if(KF_WERROR)
  add_compile_options(-Werror)
endif()

if(KF_SANITIZE)
  string(REPLACE "," ";" _kf_sanitizers "${KF_SANITIZE}")
  foreach(s IN LISTS _kf_sanitizers)
    if(NOT s MATCHES "^(address|undefined|leak|thread|memory|fuzzer-no-link)$")
      message(FATAL_ERROR "KF_SANITIZE: unknown sanitizer '${s}'")
    endif()
  endforeach()
  add_compile_options(-fsanitize=${KF_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${KF_SANITIZE})
endif()

if(KF_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "KF_FUZZ=ON needs clang for libFuzzer: configure with -DCMAKE_CXX_COMPILER=clang++-22")
  endif()
  # Coverage instrumentation for all code, so that the fuzzers are guided
  # through the runtime too; only the fuzz targets link libFuzzer's main.
  add_compile_options(-fsanitize=fuzzer-no-link)
  add_link_options(-fsanitize=fuzzer-no-link)
endif()
