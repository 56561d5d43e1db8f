# kf_unit_test(<name> SOURCES ... LIBS ...): a GoogleTest binary registered with ctest.
function(kf_unit_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  # PRE_TEST: list the tests when ctest runs, not at every build.
  # NO_PRETTY_VALUES: a parameterized test is named by its name generator
  # (Isa/Suite.Test/avx2), without a dump of the parameter's bytes.
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST NO_PRETTY_VALUES)
endfunction()
