# -*- Python -*-
# lit configuration of the mp regression tests.

import os
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "MP"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".onnxtext", ".c"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.mp_obj_root, "test")

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# The compile cache (the JIT's variants, mp-compile's libraries): the
# build's own, never the user's; tests that compile a model twice load it the
# second time, also in a later lit run (test/Execution/compile-cache and
# test/Compile/compile-cache test the cache itself). A test that checks the
# stage lines of a real mp-compile passes --no-cache.
config.environment["MP_CACHE_DIR"] = os.path.join(config.test_exec_root, "jit-cache")
config.environment["MP_CACHE_MAX_MB"] = "512"

# The real ONNX models of ../shared/models (a sibling of the repository).
models = os.path.normpath(os.path.join(config.mp_src_root, "..", "shared", "models"))
if os.path.isdir(models):
    config.available_features.add("shared-models")
config.substitutions.append(("%shared_models", models))
config.substitutions.append(("%examples", os.path.join(config.mp_src_root, "examples")))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
# Helper scripts in Inputs/ (e.g. ptx-of-binaries.py) run with lit's Python.
config.substitutions.append(("%python", sys.executable))

# The C API test compiles a C program against include/mp-c and libMPCAPI.so.
config.substitutions.append(("%host_cc", config.host_cc))
config.substitutions.append(("%mp_src_include", os.path.join(config.mp_src_root, "include")))
config.substitutions.append(("%mp_lib", os.path.join(config.mp_obj_root, "lib")))

llvm_config.add_tool_substitutions(
    [ToolSubst("mp-opt", unresolved="fatal"), ToolSubst("mp-run", unresolved="fatal")],
    [config.mp_tools_dir],
)

# Runtime libraries of mlir-runner, for execution tests of lowered code.
config.substitutions.append(
    ("%mlir_runner_utils", os.path.join(config.llvm_tools_dir, "..", "lib", "libmlir_runner_utils.so")))
config.substitutions.append(
    ("%mlir_c_runner_utils", os.path.join(config.llvm_tools_dir, "..", "lib", "libmlir_c_runner_utils.so")))
llvm_config.add_tool_substitutions(["mlir-runner"], [config.llvm_tools_dir])

# The runtime's tests (test/Runtime) compile C programs against its headers.
# Where a CUDA driver loads, the tests of the no-driver path do not apply.
config.substitutions.append(
    ("%mp_runtime_include", os.path.join(config.mp_src_root, "runtime", "include")))
try:
    import ctypes

    ctypes.CDLL("libcuda.so.1")
    config.available_features.add("cuda-driver")
except OSError:
    pass

# The CUDA toolkit's stub libcuda.so: it exports every driver entry point
# but fails cuInit, as on a machine with the toolkit and no driver.
for root in [os.environ.get(v) for v in ("CUDA_ROOT", "CUDA_HOME", "CUDA_PATH")] + ["/usr/local/cuda"]:
    stub = os.path.join(root, "lib64", "stubs", "libcuda.so") if root else None
    if stub and os.path.isfile(stub):
        config.available_features.add("cuda-stub-driver")
        config.substitutions.append(("%cuda_stub_driver", stub))
        break

# mp-compile's CUDA target runs ptxas (from the CUDA toolkit) for cubins.
import shutil

ptxas = shutil.which("ptxas")
if not ptxas:
    for root in [os.environ.get(v) for v in ("CUDA_ROOT", "CUDA_HOME", "CUDA_PATH")] + ["/usr/local/cuda"]:
        candidate = os.path.join(root, "bin", "ptxas") if root else None
        if candidate and os.access(candidate, os.X_OK):
            ptxas = candidate
            break
if ptxas:
    config.available_features.add("ptxas")
    llvm_config.with_environment("PATH", os.path.dirname(ptxas), append_path=True)
llvm_config.add_tool_substitutions(
    [ToolSubst("mp-compile", unresolved="fatal")], [config.mp_tools_dir])
