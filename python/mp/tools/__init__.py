"""Tools around mp-opt: sweeps and reports (no MLIR dependency, only onnx)."""
