# What `cmake --install` and `pip install .` (pyproject.toml, scikit-build-core)
# install, all in the default component:
#
#   cmake --install BUILD --prefix P   P/bin/mp-{opt,run,compile}, P/lib/libMPCAPI.so,
#                                      P/lib/libmp_runtime.so, P/include/mp/*.h
#   pip install .                      the same into the package (site-packages/mp/lib,
#                                      mp/include: wheel.install-dir = "mp"), the
#                                      tools into the environment's scripts folder
#
# libmp_runtime.so and its headers install from runtime/CMakeLists.txt. An
# installed mp-compile finds them relative to itself (lib/Compile/LibraryWriter.cpp,
# runtimeDirs): PREFIX/bin/../{include,lib}, or under pip the package at
# MP_PACKAGE_FROM_BIN relative to the scripts folder.

if(SKBUILD)
  set(MP_INSTALL_BINDIR "${SKBUILD_SCRIPTS_DIR}")
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -c
      "import os, sysconfig; print(os.path.relpath(os.path.join(sysconfig.get_path('platlib'), 'mp'), sysconfig.get_path('scripts')))"
    OUTPUT_VARIABLE MP_PACKAGE_FROM_BIN OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
  target_compile_definitions(MPCompile PRIVATE MP_PACKAGE_FROM_BIN="${MP_PACKAGE_FROM_BIN}")
  set(MP_TOOLS_RPATH "\$ORIGIN/${MP_PACKAGE_FROM_BIN}/lib")
else()
  set(MP_INSTALL_BINDIR bin)
  set(MP_TOOLS_RPATH "")
endif()

install(TARGETS mp-opt mp-run mp-compile mp-tune RUNTIME DESTINATION "${MP_INSTALL_BINDIR}")
install(TARGETS MPCAPI LIBRARY DESTINATION lib)
if(SKBUILD)
  # mp.emu compiles its driver with runtime/fake of the first folder above the
  # package that has it (python/mp/emu/driver.py): the package itself.
  install(FILES "${PROJECT_SOURCE_DIR}/runtime/fake/fake_driver.c" DESTINATION runtime/fake)
  install(FILES "${PROJECT_SOURCE_DIR}/runtime/lib/CudaSymbols.def" DESTINATION runtime/lib)
endif()

# Installed, the tools and libMPCAPI.so find libmp_runtime.so beside them
# (PREFIX/lib; the tools' own INSTALL_RPATH is $ORIGIN/../lib) or in the
# package, and libMLIR.so where LLVM is installed.
set_property(TARGET mp-opt mp-run mp-compile mp-tune APPEND PROPERTY INSTALL_RPATH
  ${MP_TOOLS_RPATH} "${LLVM_LIBRARY_DIR}")
set_property(TARGET MPCAPI APPEND PROPERTY INSTALL_RPATH "\$ORIGIN" "${LLVM_LIBRARY_DIR}")
