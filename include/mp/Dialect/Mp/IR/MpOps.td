//===- MpOps.td - the mp dialect ops -----------------------*- tablegen -*-===//
//
// One file per op family; this file only gathers them for tablegen.
//
//===----------------------------------------------------------------------===//

#ifndef MP_DIALECT_MP_IR_MPOPS_TD
#define MP_DIALECT_MP_IR_MPOPS_TD

include "mp/Dialect/Mp/IR/MpBase.td"
include "mp/Dialect/Mp/IR/MpElementwiseOps.td"
include "mp/Dialect/Mp/IR/MpReductionOps.td"
include "mp/Dialect/Mp/IR/MpNNOps.td"
include "mp/Dialect/Mp/IR/MpShapeOps.td"
include "mp/Dialect/Mp/IR/MpAttentionOps.td"
include "mp/Dialect/Mp/IR/MpControlFlowOps.td"
include "mp/Dialect/Mp/IR/MpTrainingOps.td"

#endif // MP_DIALECT_MP_IR_MPOPS_TD
