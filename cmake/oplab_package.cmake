# `cmake --install BUILD [--prefix P]`: the oplab CLI, one static archive liboplab.a with
# everything the CLI links (oplab::lib), the public headers, the peer bridge scripts and the
# CMake package (lib/cmake/oplab: imported targets oplab::oplab and oplab::lib, and the
# oplab_add_fuzz_test function). Installing builds nothing: it packs what the build made.
include(CMakePackageConfigHelpers)
include(GNUInstallDirs)

# The static archives oplab_lib pulls in, walking its link dependencies (the project's own
# libraries, the Halide kernels and their shared runtime); imported and interface targets
# from other packages are dependencies of the package instead (oplabConfig.cmake).
function(_oplab_collect_archives target out_var)
  set(seen ${${out_var}})
  get_target_property(type ${target} TYPE)
  set(deps)
  if(NOT type STREQUAL "INTERFACE_LIBRARY")
    get_target_property(d ${target} LINK_LIBRARIES)
    if(d)
      list(APPEND deps ${d})
    endif()
  endif()
  get_target_property(d ${target} INTERFACE_LINK_LIBRARIES)
  if(d)
    list(APPEND deps ${d})
  endif()
  foreach(item ${deps})
    string(REGEX REPLACE "^\\$<LINK_LIBRARY:[A-Z_]+,(.+)>$" "\\1" item "${item}")
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.+)>$" "\\1" item "${item}")
    if(NOT TARGET ${item} OR item IN_LIST seen)
      continue()
    endif()
    get_target_property(imported ${item} IMPORTED)
    if(imported)
      continue()
    endif()
    list(APPEND seen ${item})
    _oplab_collect_archives(${item} seen)
  endforeach()
  set(${out_var} ${seen} PARENT_SCOPE)
endfunction()

set(_oplab_archive_targets oplab_lib)
_oplab_collect_archives(oplab_lib _oplab_archive_targets)
set(_oplab_mri "create liboplab.a\n")
foreach(t ${_oplab_archive_targets})
  get_target_property(type ${t} TYPE)
  if(type STREQUAL "STATIC_LIBRARY")
    string(APPEND _oplab_mri "addlib $<TARGET_FILE:${t}>\n")
  endif()
endforeach()
string(APPEND _oplab_mri "save\nend\n")
file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/package/liboplab.mri CONTENT "${_oplab_mri}")

# The archive is packed when installing (an ar MRI script run in the build's package/ folder).
install(CODE "execute_process(COMMAND ${CMAKE_COMMAND} -E remove -f liboplab.a
                              WORKING_DIRECTORY \"${PROJECT_BINARY_DIR}/package\")
              execute_process(COMMAND \"${CMAKE_AR}\" -M INPUT_FILE liboplab.mri
                              WORKING_DIRECTORY \"${PROJECT_BINARY_DIR}/package\"
                              RESULT_VARIABLE rc)
              if(NOT rc EQUAL 0)
                message(FATAL_ERROR \"oplab: packing liboplab.a failed (${CMAKE_AR} -M)\")
              endif()")
install(FILES ${PROJECT_BINARY_DIR}/package/liboplab.a DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(PROGRAMS $<TARGET_FILE:oplab> DESTINATION ${CMAKE_INSTALL_BINDIR})

# Headers: the plugin ABI (C), the in-process entry point, and the core headers it includes.
install(FILES ${PROJECT_SOURCE_DIR}/include/oplab/plugin.h ${PROJECT_SOURCE_DIR}/include/oplab/oplab.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/oplab)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/oplab/core
        FILES_MATCHING PATTERN "*.h")
# The peer bridge: the installed CLI finds it under PREFIX/share/oplab (peer/torchvision_backend.cpp).
file(GLOB _oplab_peer_scripts CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/peer/*.py)
install(FILES ${_oplab_peer_scripts} DESTINATION ${CMAKE_INSTALL_DATADIR}/oplab)
# The Python helper of the line protocol (docs/protocol.md), the pytest front door, and the
# example backends with their pytest test.
install(FILES ${PROJECT_SOURCE_DIR}/python/oplab_backend.py ${PROJECT_SOURCE_DIR}/python/oplab_pytest.py
        DESTINATION ${CMAKE_INSTALL_DATADIR}/oplab/python)
install(FILES ${PROJECT_SOURCE_DIR}/examples/python-exec/roi_align.py ${PROJECT_SOURCE_DIR}/examples/python-exec/roi_align_f16.py
              ${PROJECT_SOURCE_DIR}/examples/python-exec/roi_align_buggy.py
              ${PROJECT_SOURCE_DIR}/examples/python-exec/test_roi_align_fuzz.py
        DESTINATION ${CMAKE_INSTALL_DATADIR}/oplab/examples/python-exec)

# The OpenCV peer links OpenCV when the build found it (peer/CMakeLists.txt): so must users of the archive.
get_target_property(_oplab_peer_libs oplab_peer_objects LINK_LIBRARIES)
set(OPLAB_PACKAGE_WITH_OPENCV OFF)
if("opencv_core" IN_LIST _oplab_peer_libs)
  set(OPLAB_PACKAGE_WITH_OPENCV ON)
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/oplabConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/package/oplabConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/oplab
                              PATH_VARS CMAKE_INSTALL_INCLUDEDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/oplabConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/package/oplabConfig.cmake ${PROJECT_BINARY_DIR}/package/oplabConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/oplab_fuzz_test.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/oplab)
