# install_test.cmake - builds and runs examples/ against the installed package, as a user would.
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=... -DC_COMPILER=... -P install_test.cmake
# 1. cmake --install into WORK_DIR/prefix;
# 2. configure and build examples/ (find_package(pscan)) against that prefix and run scan_example;
# 3. compile examples/scan_example.c with `pkg-config --cflags --libs pscan` and run it.
cmake_minimum_required(VERSION 3.25)

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "${what}:\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install test: ${what} failed (${rc})")
  endif()
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

run_step("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

# find_package(pscan)
run_step("configure examples/"
  ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples -B ${WORK_DIR}/examples -G ${GENERATOR}
  -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_C_COMPILER=${C_COMPILER})
run_step("build examples/" ${CMAKE_COMMAND} --build ${WORK_DIR}/examples)
run_step("run scan_example (find_package)" ${WORK_DIR}/examples/scan_example)

# pkg-config: pscan.pc names the configure-time prefix, so point prefix at where we installed. A static
# libpscan needs its private libraries (threads, libm, the backends' runtimes) on the link line: --static.
file(GLOB_RECURSE pc_files ${prefix}/*/pscan.pc)
list(GET pc_files 0 pc_file)
get_filename_component(pc_dir ${pc_file} DIRECTORY)
get_filename_component(lib_dir ${pc_dir} DIRECTORY)
set(pc_static --static)
if(EXISTS ${lib_dir}/libpscan.so)
  set(pc_static "")
endif()
set(ENV{PKG_CONFIG_PATH} ${pc_dir})
execute_process(COMMAND pkg-config --define-variable=prefix=${prefix} --cflags --libs ${pc_static} pscan
  RESULT_VARIABLE rc OUTPUT_VARIABLE flags ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "install test: pkg-config --cflags --libs pscan failed: ${err}")
endif()
message(STATUS "pkg-config --cflags --libs ${pc_static} pscan: ${flags}")
separate_arguments(flag_list UNIX_COMMAND "${flags}")
run_step("compile scan_example.c with pkg-config flags"
  ${C_COMPILER} ${SOURCE_DIR}/examples/scan_example.c ${flag_list} -o ${WORK_DIR}/scan_example_pc)
set(ENV{LD_LIBRARY_PATH} "${lib_dir}:$ENV{LD_LIBRARY_PATH}")
run_step("run scan_example (pkg-config)" ${WORK_DIR}/scan_example_pc)
