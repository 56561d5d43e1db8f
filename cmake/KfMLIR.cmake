# Finds Debian's LLVM/MLIR 22 and sets up the compiler half of the build: static MLIR archives over
# the shared libLLVM, never libMLIR.so mixed in (see docs/architecture.md, "Build").

find_package(MLIR REQUIRED CONFIG HINTS /usr/lib/llvm-22/lib/cmake/mlir)
if(NOT LLVM_VERSION_MAJOR EQUAL 22)
  message(FATAL_ERROR "Kernelforge needs LLVM/MLIR 22, found ${LLVM_PACKAGE_VERSION} in ${MLIR_DIR}")
endif()
message(STATUS "Using MLIR ${LLVM_PACKAGE_VERSION} from ${MLIR_DIR}")

set(LLVM_RUNTIME_OUTPUT_INTDIR ${PROJECT_BINARY_DIR}/bin)
set(LLVM_LIBRARY_OUTPUT_INTDIR ${PROJECT_BINARY_DIR}/lib)
set(MLIR_BINARY_DIR ${PROJECT_BINARY_DIR})
list(APPEND CMAKE_MODULE_PATH "${MLIR_CMAKE_DIR}" "${LLVM_CMAKE_DIR}")
include(TableGen)
include(AddLLVM)
include(AddMLIR)
include(HandleLLVMOptions)

# Debian gives some static MLIR archives (ExecutionEngine, MlirOptMain, ...) the interface link
# library "MLIR", which drags libMLIR.so into a static link: two copies of every TypeID.
if(NOT KF_LINK_MLIR_DYLIB)
  foreach(t IN LISTS MLIR_EXPORTED_TARGETS)
    if(TARGET ${t} AND NOT t STREQUAL "MLIR")
      get_target_property(_type ${t} TYPE)
      if(_type STREQUAL "STATIC_LIBRARY")
        get_target_property(_libs ${t} INTERFACE_LINK_LIBRARIES)
        if(_libs AND "MLIR" IN_LIST _libs)
          list(REMOVE_ITEM _libs MLIR)
          set_target_properties(${t} PROPERTIES INTERFACE_LINK_LIBRARIES "${_libs}")
        endif()
      endif()
    endif()
  endforeach()
endif()

# kf_mlir_libs(<out> libs...): the static MLIR libraries given, or libMLIR.so alone; never both.
function(kf_mlir_libs out)
  if(KF_LINK_MLIR_DYLIB)
    set(${out} MLIR PARENT_SCOPE)
  else()
    set(${out} ${ARGN} PARENT_SCOPE)
  endif()
endfunction()

include_directories(SYSTEM ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
# LLVM_DEFINITIONS is a single string in Debian's config; split it or every TU gets one bogus -D.
separate_arguments(KF_LLVM_DEFINITIONS NATIVE_COMMAND ${LLVM_DEFINITIONS})
add_definitions(${KF_LLVM_DEFINITIONS})

# Tablegen include paths must be known before the first add_subdirectory that runs tablegen.
include_directories(
  ${PROJECT_SOURCE_DIR}/dialect/include ${PROJECT_BINARY_DIR}/dialect/include
  ${PROJECT_SOURCE_DIR}/passes/include ${PROJECT_BINARY_DIR}/passes/include
  ${PROJECT_SOURCE_DIR}/codegen/include ${PROJECT_SOURCE_DIR}/target/include
  ${PROJECT_SOURCE_DIR}/runtime/include)
