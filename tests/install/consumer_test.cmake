# cmake -P script run by the install_cpp_consumer test (see CMakeLists.txt).
foreach(var MSRT_BUILD_DIR EXAMPLE_DIR WORK_DIR CMAKE_GENERATOR CXX_COMPILER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "consumer_test.cmake: ${var} is not set")
  endif()
endforeach()

set(prefix ${WORK_DIR}/prefix)
set(example_build ${WORK_DIR}/build)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

run("cmake --install" ${CMAKE_COMMAND} --install ${MSRT_BUILD_DIR} --prefix ${prefix})

# Private dependencies must not leak into the installed package: a consumer
# needs only msrt and Threads. nlohmann_json is header-only, so it must not be
# named at all; the shared libraries libmsrt links privately (oneDNN, OpenMP)
# may appear only as IMPORTED_LINK_DEPENDENT_LIBRARIES (CMake's note for the
# runtime linker), never in an INTERFACE_ property or a find_dependency().
file(GLOB_RECURSE package_files ${prefix}/*.cmake)
if(NOT package_files)
  message(FATAL_ERROR "no CMake package files were installed under ${prefix}")
endif()
foreach(file IN LISTS package_files)
  file(READ ${file} text)
  string(FIND "${text}" "nlohmann" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "the installed ${file} mentions nlohmann_json, a private dependency")
  endif()
  file(STRINGS ${file} lines REGEX "INTERFACE_|find_dependency")
  foreach(line IN LISTS lines)
    if(line MATCHES "DNNL|dnnl|OpenMP|msrt_flags")
      message(FATAL_ERROR "the installed ${file} exposes a private dependency: ${line}")
    endif()
  endforeach()
endforeach()
file(GLOB_RECURSE private_headers ${prefix}/include/nlohmann/*)
if(private_headers)
  message(FATAL_ERROR "nlohmann headers were installed: ${private_headers}")
endif()

run("configuring the example" ${CMAKE_COMMAND} -S ${EXAMPLE_DIR} -B ${example_build} -G ${CMAKE_GENERATOR}
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release
    "-DCMAKE_CXX_FLAGS=${CONSUMER_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${CONSUMER_FLAGS}")
run("building the example" ${CMAKE_COMMAND} --build ${example_build})

# The program, isolated from the caller's context environment.
set(ENV{MSRT_CONTEXT_PROFILE} "")
set(ENV{DEVICE_ID} "")
run("running the example" ${example_build}/cpp_context)
set(expected
    "mode: 0\n"
    "max_device_memory: 3.5\n"
    "ValueError: For 'context.set_context', the argument 'max_device_memory' should be greater than \"0GB\", but got '0.0GB'.\n"
    "mode after the failed call: 0\n"
    "row sums: 4 6\n"
    "reshape error: [reshape]"
    "msrt context (profile r2.3, device ")
foreach(line IN LISTS expected)
  string(FIND "${last_output}" "${line}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the example's output lacks \"${line}\":\n${last_output}")
  endif()
endforeach()
string(REGEX MATCH "\n  max_device_memory +3\\.5 +api" row "${last_output}")
if(NOT row)
  message(FATAL_ERROR "the summary does not list max_device_memory as set:\n${last_output}")
endif()
message(STATUS "example output:\n${last_output}")
