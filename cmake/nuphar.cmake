# nuphar_library(NAME SOURCES ... DEPS ...) and nuphar_test(NAME SOURCES ... DEPS ...).
# Every library compiles with the ONNX definitions the Debian libonnx was built with.

# A target whose listed sources are not all on disk yet is skipped with a warning, so one
# engineer's half-written CMakeLists.txt does not stop everyone else's configure.
function(nuphar_sources_exist out)
  set(ok TRUE)
  foreach(src ${ARGN})
    if(NOT IS_ABSOLUTE ${src})
      set(src ${CMAKE_CURRENT_SOURCE_DIR}/${src})
    endif()
    if(NOT EXISTS ${src})
      message(WARNING "skipping target: source ${src} does not exist")
      set(ok FALSE)
    endif()
  endforeach()
  set(${out} ${ok} PARENT_SCOPE)
endfunction()

function(nuphar_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  nuphar_sources_exist(ok ${ARG_SOURCES})
  if(NOT ok)
    return()
  endif()
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_compile_definitions(${name} PUBLIC ONNX_ML=1 ONNX_NAMESPACE=onnx)
  target_compile_options(${name} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
endfunction()

# Tests read the real models and the original tools' fixtures from ../shared next to the checkout.
get_filename_component(NUPHAR_SHARED_DIR "${PROJECT_SOURCE_DIR}/../shared" ABSOLUTE)
if(NOT EXISTS "${NUPHAR_SHARED_DIR}/models" OR NOT EXISTS "${NUPHAR_SHARED_DIR}/fixtures")
  message(WARNING "${NUPHAR_SHARED_DIR} (models/, fixtures/) is missing: the tests that read the shared "
                  "models and fixtures will fail. Check the repository out next to the shared folder.")
endif()

function(nuphar_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  nuphar_sources_exist(ok ${ARG_SOURCES})
  if(NOT ok OR NOT ARG_SOURCES)
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    NUPHAR_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    NUPHAR_SHARED_DIR="${NUPHAR_SHARED_DIR}"
    NUPHAR_BIN_DIR="${CMAKE_RUNTIME_OUTPUT_DIRECTORY}")
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  add_test(NAME ${name} COMMAND ${name})
endfunction()
