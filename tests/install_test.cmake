# install_test.cmake - builds and runs examples/ against the installed package, as a user would.
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=... -DC_COMPILER=... -P install_test.cmake
# 1. cmake --install into WORK_DIR/prefix;
# 2. configure and build examples/ (find_package(pscan)) against that prefix and run scan_example and recurrence;
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
run_step("run recurrence (find_package)" ${WORK_DIR}/examples/recurrence)

# The README's install block, run as written: only its prefix (/opt/pscan), its build folder and the path of
# examples/ are replaced by this test's own.
file(READ ${SOURCE_DIR}/README.md readme)
string(FIND "${readme}" "<!-- install-test:" at)
if(at LESS 0)
  message(FATAL_ERROR "install test: README.md has no install-test block")
endif()
string(SUBSTRING "${readme}" ${at} -1 rest)
string(FIND "${rest}" "```sh\n" open_at)
math(EXPR open_at "${open_at} + 6")
string(SUBSTRING "${rest}" ${open_at} -1 rest)
string(FIND "${rest}" "```" close_at)
string(SUBSTRING "${rest}" 0 ${close_at} block)
string(REPLACE "/opt/pscan" "${WORK_DIR}/readme-prefix" block "${block}")
string(REPLACE "cmake --install build " "cmake --install ${BUILD_DIR} " block "${block}")
string(REPLACE "examples/" "${SOURCE_DIR}/examples/" block "${block}")
file(WRITE ${WORK_DIR}/readme_block.sh "set -eux\n${block}")
message(STATUS "the README's install block:\n${block}")
run_step("the README's install block" bash ${WORK_DIR}/readme_block.sh WORKING_DIRECTORY ${WORK_DIR})

# The installed tree moved elsewhere still works: pkg-config finds the prefix from the .pc file's own place.
file(RENAME ${WORK_DIR}/readme-prefix ${WORK_DIR}/moved-prefix)
file(WRITE ${WORK_DIR}/moved.sh "set -eux\nexport PKG_CONFIG_PATH=${WORK_DIR}/moved-prefix/lib/pkgconfig\n"
  "cc ${SOURCE_DIR}/examples/scan_example.c $(pkg-config --cflags --libs pscan) -o scan_example_moved\n"
  "./scan_example_moved\n")
run_step("a moved install tree" bash ${WORK_DIR}/moved.sh WORKING_DIRECTORY ${WORK_DIR})
