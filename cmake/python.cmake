# The Python wheel's share of the build (scikit-build-core sets SKBUILD): the shared library, installed as
# pscan/libpscan.so beside the Python modules from python/pscan/, which load it with cffi (ABI mode). One file,
# no soname links: a wheel is a zip and would store each link as a copy. Only the "python" component goes into
# the wheel (pyproject.toml), so the C package's headers, static library and CMake files stay out of it.
install(FILES $<TARGET_FILE:pscan_shared> DESTINATION pscan RENAME libpscan.so COMPONENT python)
