# Compiler flags, sanitizers and the optional backends.
add_library(msrt_flags INTERFACE)
target_compile_options(msrt_flags INTERFACE -Wall -Wextra -Wno-unused-parameter)
if(MSRT_WERROR)
  target_compile_options(msrt_flags INTERFACE -Werror)
endif()
if(MSRT_SANITIZE)
  add_compile_options(-fsanitize=${MSRT_SANITIZE} -fno-omit-frame-pointer -g)
  add_link_options(-fsanitize=${MSRT_SANITIZE})
  if(MSRT_SANITIZE MATCHES "address" AND CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    # One shared ASan runtime for the test programs and the Python extension
    # (python3 is not instrumented: `make asan` preloads the runtime into it).
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libclang_rt.asan-x86_64.so
                    OUTPUT_VARIABLE MSRT_ASAN_RUNTIME OUTPUT_STRIP_TRAILING_WHITESPACE)
    get_filename_component(MSRT_ASAN_RUNTIME_DIR "${MSRT_ASAN_RUNTIME}" DIRECTORY)
    add_link_options(-shared-libasan "-Wl,-rpath,${MSRT_ASAN_RUNTIME_DIR}")
  endif()
  if(MSRT_SANITIZE MATCHES "undefined")
    # Undefined behaviour fails the run instead of printing and going on.
    add_compile_options(-fno-sanitize-recover=undefined)
  endif()
endif()

# CUDA: only CMake decides; code never tests a macro outside src/kernels.
set(MSRT_HAVE_CUDA OFF)
if(NOT MSRT_CUDA STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    set(MSRT_HAVE_CUDA ON)
  elseif(MSRT_CUDA STREQUAL "ON")
    message(FATAL_ERROR "MSRT_CUDA=ON but the CUDA toolkit was not found")
  endif()
endif()
message(STATUS "msrt: CUDA backend ${MSRT_HAVE_CUDA}")
