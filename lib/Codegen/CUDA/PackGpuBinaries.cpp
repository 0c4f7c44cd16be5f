//===- PackGpuBinaries.cpp - one multi-architecture object per binary -----===//

#include "mp/Codegen/CUDA/Passes.h"
#include "mp/gpu_binary.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mp {
#define GEN_PASS_DEF_PACKGPUBINARIES
#include "mp/Codegen/CUDA/Passes.h.inc"
} // namespace mp

using namespace mlir;

namespace {

/// Appends the little-endian bytes of `value`.
template <typename T> void put(std::string &out, T value) {
  for (size_t i = 0; i < sizeof(T); ++i)
    out.push_back(static_cast<char>((uint64_t)value >> (8 * i)));
}

struct PackGpuBinariesPass
    : public mp::impl::PackGpuBinariesBase<PackGpuBinariesPass> {
  void runOnOperation() override {
    WalkResult result = getOperation().walk([&](gpu::BinaryOp binary) {
      if (failed(pack(binary)))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  LogicalResult pack(gpu::BinaryOp binary) {
    struct Image {
      uint32_t sm, kind;
      std::string bytes;
    };
    std::vector<Image> images;
    for (Attribute attr : binary.getObjects()) {
      auto object = cast<gpu::ObjectAttr>(attr);
      auto target = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget());
      StringRef chip = target ? target.getChip() : "";
      unsigned sm = 0;
      if (!chip.consume_front("sm_") || chip.take_while(llvm::isDigit)
                                            .getAsInteger(10, sm))
        return binary.emitOpError("has an object for ")
               << object.getTarget() << ", not an NVVM sm_XY target";
      Image image{sm, 0, object.getObject().getValue().str()};
      switch (object.getFormat()) {
      case gpu::CompilationTarget::Binary:
        image.kind = MP_GPU_IMAGE_CUBIN;
        break;
      case gpu::CompilationTarget::Assembly:
        image.kind = MP_GPU_IMAGE_PTX;
        image.bytes.push_back('\0');
        break;
      default:
        return binary.emitOpError("has an object in a format the mp runtime "
                                  "cannot load (use cubin or PTX)");
      }
      images.push_back(std::move(image));
    }
    std::string out(MP_GPU_BINARY_MAGIC, 8);
    put<uint32_t>(out, MP_GPU_BINARY_VERSION);
    put<uint32_t>(out, images.size());
    uint64_t offset = out.size() + images.size() * sizeof(mp_gpu_image_entry);
    for (const Image &image : images) {
      put<uint32_t>(out, image.sm);
      put<uint32_t>(out, image.kind);
      put<uint64_t>(out, offset);
      put<uint64_t>(out, image.bytes.size());
      offset += image.bytes.size();
    }
    for (const Image &image : images)
      out += image.bytes;
    auto first = cast<gpu::ObjectAttr>(binary.getObjects()[0]);
    auto packed = gpu::ObjectAttr::get(
        &getContext(), first.getTarget(), gpu::CompilationTarget::Binary,
        StringAttr::get(&getContext(), out), /*properties=*/nullptr,
        /*kernels=*/nullptr);
    binary.setObjectsAttr(ArrayAttr::get(&getContext(), {packed}));
    return success();
  }
};

} // namespace
