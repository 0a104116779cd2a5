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

# Gloo (CPU collectives): Debian's libgloo-dev ships a CMake package.
set(MSRT_HAVE_GLOO OFF)
if(NOT MSRT_GLOO STREQUAL "OFF")
  find_package(Gloo CONFIG QUIET)
  if(Gloo_FOUND AND TARGET gloo)
    set(MSRT_HAVE_GLOO ON)
  elseif(MSRT_GLOO STREQUAL "ON")
    message(FATAL_ERROR "MSRT_GLOO=ON but Gloo was not found (Debian: libgloo-dev)")
  endif()
endif()
message(STATUS "msrt: Gloo collectives ${MSRT_HAVE_GLOO}")

# NCCL (GPU collectives): with the CUDA backend, where the toolkit has NCCL.
set(MSRT_HAVE_NCCL OFF)
if(MSRT_HAVE_CUDA AND NOT MSRT_NCCL STREQUAL "OFF")
  find_path(MSRT_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  find_library(MSRT_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib
               ${CUDAToolkit_LIBRARY_ROOT}/lib64)
  if(MSRT_NCCL_INCLUDE_DIR AND MSRT_NCCL_LIBRARY)
    set(MSRT_HAVE_NCCL ON)
  elseif(MSRT_NCCL STREQUAL "ON")
    message(FATAL_ERROR "MSRT_NCCL=ON but NCCL (nccl.h, libnccl) was not found beside the CUDA toolkit")
  endif()
elseif(MSRT_NCCL STREQUAL "ON")
  message(FATAL_ERROR "MSRT_NCCL=ON needs the CUDA backend (MSRT_CUDA)")
endif()
message(STATUS "msrt: NCCL collectives ${MSRT_HAVE_NCCL}")
