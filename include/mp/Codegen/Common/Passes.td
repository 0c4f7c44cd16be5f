//===- Passes.td - passes on bufferized code shared by both targets ---*- tablegen -*-===//

#ifndef MP_CODEGEN_COMMON_PASSES_TD
#define MP_CODEGEN_COMMON_PASSES_TD

include "mlir/Pass/PassBase.td"

def PlanArena : Pass<"mp-plan-arena", "mlir::func::FuncOp"> {
  let summary = "Place a function's temporary buffers in one arena planned at compile time";
  let description = [{
    Runs on bufferized code once deallocations are placed. Every
    `memref.alloc` of a static, identity-layout buffer in the function's
    body (its single block) that is freed by one `memref.dealloc` in that
    block is live from the first to the last op of the body that uses it or
    a view of it (where the alloc and dealloc stand does not matter, see
    `mp-hoist-buffers`). The pass packs these live
    ranges into one byte arena, placing the largest buffers first at the
    lowest offset that no buffer live at the same time overlaps (offsets
    aligned to `alignment`), then replaces each alloc by a `memref.view`
    of the arena and drops its dealloc; the arena is allocated once at the
    function's start and freed before it returns.

    Buffers that are returned, freed conditionally or freed elsewhere,
    dynamic shapes and functions of several blocks are left alone. The
    function gets an `mp.arena` attribute: `bytes` (the arena), `buffers`
    (how many it holds), `buffer_bytes` (their sizes summed: what
    allocating each one would take) and `peak_bytes` (the most bytes live
    at once, which the arena can at best match).
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"256",
           "Byte alignment of every buffer in the arena (a power of 2)">,
  ];
  let dependentDialects = [
    "::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect",
  ];
}

def HoistBuffers : Pass<"mp-hoist-buffers", "mlir::func::FuncOp"> {
  let summary = "Move a function's static temporary buffers to its start and their deallocations to its end";
  let description = [{
    Every `memref.alloc` without operands in the function's body (its
    single block) moves to the start of the body, and a `memref.dealloc` of
    it in the body moves to just before the terminator. Nothing is then
    allocated or freed between two kernels, so the GPU target can fuse
    kernels that the bufferized program had separated by an allocation.
    Lifetimes are not lost: `mp-plan-arena`, run after fusion, takes a
    buffer's live range from its uses.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def DropInPlaceResults : Pass<"mp-drop-in-place-results", "mlir::ModuleOp"> {
  let summary = "Make results marked as updated in place write their input's buffer";
  let description = [{
    Runs on bufferized code, before results become out-parameters. A public
    function result marked `mp.in_place_of = K` (mp-kv-cache-in-place, or a
    TensorScatter cache) is the state in argument K after the call: it is
    dropped from the function. When bufferization wrote it into argument
    K's buffer (the in-place case: the returned buffer is that argument)
    nothing else is needed; otherwise the result is copied into argument K
    first, so the semantics hold either way.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def DistinctResults : Pass<"mp-distinct-results", "mlir::ModuleOp"> {
  let summary = "Give every result of a public function its own buffer";
  let description = [{
    Runs on bufferized code, before results become out-parameters. A buffer
    returned more than once (two graph outputs that are one value, or a
    node's value returned for inspection beside the graph output it is)
    would become two out-parameters for one allocation; each repeat is
    returned as a copy instead.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

#endif // MP_CODEGEN_COMMON_PASSES_TD
