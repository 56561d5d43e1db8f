# Runs a command and checks its exit code and output, for tests of
# executables: cmake -DCOMMAND=<cmd|arg|...> -DEXIT_CODE=<n>
#   [-DSTDOUT=<regex>] [-DSTDERR=<regex>] -P expect.cmake
# ('|' separates the arguments: add_test would split a ';' list.)
string(REPLACE "|" ";" command "${COMMAND}")
execute_process(COMMAND ${command}
  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code STREQUAL EXIT_CODE)
  message(FATAL_ERROR "exit code ${code}, expected ${EXIT_CODE}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(DEFINED STDOUT AND NOT out MATCHES "${STDOUT}")
  message(FATAL_ERROR "stdout does not match '${STDOUT}':\n${out}")
endif()
if(DEFINED STDERR AND NOT err MATCHES "${STDERR}")
  message(FATAL_ERROR "stderr does not match '${STDERR}':\n${err}")
endif()
