# ctest `cmake_consumer` (tests/CMakeLists.txt): installs this build of oplab to a fresh
# prefix, then configures, builds and tests examples/cmake-consumer against it, as a user
# would. The install packs what the build made (nothing is rebuilt, no Halide kernel).
# Arguments: -DBUILD=<oplab build dir> -DSOURCE=<consumer source> -DWORK=<scratch dir>
#            -DGENERATOR=<CMake generator>
file(REMOVE_RECURSE ${WORK})
foreach(step
    "${CMAKE_COMMAND};--install;${BUILD};--prefix;${WORK}/prefix"
    "${CMAKE_COMMAND};-S;${SOURCE};-B;${WORK}/build;-G;${GENERATOR};-DCMAKE_PREFIX_PATH=${WORK}/prefix;-DCMAKE_BUILD_TYPE=Release"
    "${CMAKE_COMMAND};--build;${WORK}/build;-j2"
    "${CMAKE_CTEST_COMMAND};--test-dir;${WORK}/build;--output-on-failure")
  execute_process(COMMAND ${step} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cmake_consumer: `${step}` failed (${rc}):\n${out}")
  endif()
  message("${out}")
endforeach()
# The installed CLI finds its peer bridge under the prefix, not in the source tree.
if(NOT EXISTS ${WORK}/prefix/share/oplab/torchvision_bridge.py)
  message(FATAL_ERROR "cmake_consumer: the install has no share/oplab/torchvision_bridge.py")
endif()
file(REMOVE_RECURSE ${WORK})
