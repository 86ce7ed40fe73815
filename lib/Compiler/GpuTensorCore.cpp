//===- GpuTensorCore.cpp - building blocks of tensor-core kernels ---------===//
//
// See GpuTensorCore.h.
//
//===----------------------------------------------------------------------===//

#include "GpuTensorCore.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace strata {

ValueRange
forLoop(OpBuilder &b, Location loc, Value lower, Value upper, int64_t step,
        ValueRange init,
        function_ref<SmallVector<Value>(Value, ValueRange)> bodyBuilder) {
  auto index = [&](Value v) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  };
  auto loop = scf::ForOp::create(
      b, loc, index(lower), index(upper),
      arith::ConstantIndexOp::create(b, loc, step), init,
      [&](OpBuilder &nested, Location, Value iv, ValueRange state) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToEnd(nested.getInsertionBlock());
        Value i = arith::IndexCastOp::create(b, loc, b.getI32Type(), iv);
        scf::YieldOp::create(b, loc, bodyBuilder(i, state));
      });
  return loop.getResults();
}

void ifThen(OpBuilder &b, Location loc, Value condition,
            function_ref<void()> then) {
  auto op = scf::IfOp::create(b, loc, condition, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&op.getThenRegion().front());
  then();
}

Value TensorCoreEmitter::cf(double v) {
  return arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                        APFloat(static_cast<float>(v)));
}

Value TensorCoreEmitter::threadIndex() {
  return arith::IndexCastOp::create(
      b, loc, i32(), gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
}

Value TensorCoreEmitter::blockIndex() {
  return arith::IndexCastOp::create(
      b, loc, i32(), gpu::BlockIdOp::create(b, loc, gpu::Dimension::x));
}

Value TensorCoreEmitter::uniformWarpgroup(Value tid) {
  return gpu::ShuffleOp::create(b, loc, shr(tid, 7), 0, 32,
                                gpu::ShuffleMode::IDX)
      .getShuffleResult();
}

Value TensorCoreEmitter::swizzled(Value row, Value chunk, int64_t tileRows,
                                  int64_t chunksPerRow) {
  Value inHalf = add(shl(row, 7), shl(bxor(band(chunk, 7), band(row, 7)), 4));
  if (chunksPerRow <= 8)
    return inHalf;
  return add(mul(shr(chunk, 3), c32(tileRows * 128)), inHalf);
}

void TensorCoreEmitter::loadTile(Value tid, int64_t threads, Value src,
                                 Value tile, int64_t count,
                                 int64_t chunksPerRow, int64_t rowBytes,
                                 Value lastRow) {
  int64_t chunks = count * chunksPerRow;
  int64_t rowShift = llvm::Log2_64(chunksPerRow);
  for (int64_t first = 0; first < chunks; first += threads) {
    Value index = add(tid, c32(first));
    auto copy = [&] {
      Value row = shr(index, rowShift);
      Value chunk = band(index, chunksPerRow - 1);
      Value srcRow =
          lastRow ? arith::MinUIOp::create(b, loc, row, lastRow) : row;
      Value from = at(
          src, arith::AddIOp::create(
                   b, loc,
                   arith::MulIOp::create(b, loc, wide(srcRow), c64(rowBytes)),
                   wide(shl(chunk, 4))));
      Value to = at(tile, swizzled(row, chunk, count, chunksPerRow));
      NVVM::CpAsyncOp::create(b, loc, to, from, 16,
                              NVVM::LoadCacheModifierKind::CG, Value());
    };
    // The last round of a tile whose chunks are no multiple of the threads
    // (12 warps' 384 threads over 64 rows of 8 chunks) takes only some.
    if (first + threads <= chunks)
      copy();
    else
      ifThen(b, loc,
             arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, index,
                                   c32(chunks)),
             copy);
  }
}

LLVM::InlineAsmOp TensorCoreEmitter::inlineAsm(Type result, ValueRange operands,
                                               StringRef text,
                                               StringRef constraints) {
  return LLVM::InlineAsmOp::create(
      b, loc, result, operands, text, constraints,
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      ArrayAttr());
}

void TensorCoreEmitter::asmBarrier(StringRef text) {
  inlineAsm(Type(), ValueRange(), text, "~{memory}");
}

void TensorCoreEmitter::namedBarrier(Value id, int64_t threads) {
  inlineAsm(Type(), ValueRange{id},
            "bar.sync $0, " + std::to_string(threads) + ";", "r,~{memory}");
}

SmallVector<Value> TensorCoreEmitter::fenceOperands(ArrayRef<Value> values) {
  std::string constraints;
  llvm::raw_string_ostream cs(constraints);
  SmallVector<Type> types;
  for (Value v : values) {
    types.push_back(v.getType());
    cs << (v.getType().isF32() ? "=f," : "=r,");
  }
  for (size_t i = 0; i < values.size(); ++i)
    cs << (i ? "," : "") << i;
  Value fenced =
      inlineAsm(LLVM::LLVMStructType::getLiteral(b.getContext(), types), values,
                "", constraints)
          .getResult(0);
  SmallVector<Value> out;
  for (size_t i = 0; i < values.size(); ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, fenced, i));
  return out;
}

Value TensorCoreEmitter::descriptor(Value tile, int64_t leading,
                                    int64_t stride) {
  Value address = sharedAddress(tile);
  // Bits 0-13: the start address / 16; 16-29: the leading byte offset / 16;
  // 32-45: the stride byte offset / 16; 62-63: 1, the 128-byte swizzle.
  Value low = arith::OrIOp::create(b, loc, shr(band(address, 0x3FFFF), 4),
                                   c32((leading >> 4) << 16));
  int64_t high = (stride >> 4) | (int64_t(1) << 30);
  return arith::OrIOp::create(b, loc, wide(low), c64(high << 32));
}

Value TensorCoreEmitter::advance(Value desc, int64_t bytes) {
  if (bytes == 0)
    return desc;
  return arith::AddIOp::create(b, loc, desc, c64(bytes >> 4));
}

SmallVector<Value>
TensorCoreEmitter::wgmmaStep(ArrayRef<Value> acc, Value aDescriptor,
                             ArrayRef<Value> aWords, Value bDescriptor,
                             bool transposeB, bool accumulate) {
  int64_t count = acc.size();
  std::string text, constraints;
  llvm::raw_string_ostream os(text), cs(constraints);
  os << "{\n.reg .pred p;\nsetp.ne.b32 p, $"
     << (2 * count + (aDescriptor ? 2 : 5))
     << ", 0;\nwgmma.mma_async.sync.aligned.m64n" << 2 * count << "k16.f32."
     << (f16 ? "f16.f16" : "bf16.bf16") << " {";
  for (int64_t i = 0; i < count; ++i)
    os << (i ? ", $" : "$") << i;
  os << "}, ";
  SmallVector<Value> operands(acc.begin(), acc.end());
  for (int64_t i = 0; i < count; ++i)
    cs << "=f,";
  for (int64_t i = 0; i < count; ++i)
    cs << i << ",";
  if (aDescriptor) {
    os << "$" << 2 * count << ", $" << 2 * count + 1 << ", p, 1, 1, 0, "
       << (transposeB ? 1 : 0) << ";\n}";
    operands.append({aDescriptor, bDescriptor});
    cs << "l,l,r";
  } else {
    os << "{$" << 2 * count << ", $" << 2 * count + 1 << ", $" << 2 * count + 2
       << ", $" << 2 * count + 3 << "}, $" << 2 * count + 4 << ", p, 1, 1, "
       << (transposeB ? 1 : 0) << ";\n}";
    operands.append(aWords.begin(), aWords.end());
    operands.push_back(bDescriptor);
    cs << "r,r,r,r,l,r";
  }
  operands.push_back(c32(accumulate ? 1 : 0));
  auto structType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(count, f32()));
  Value d = inlineAsm(structType, operands, text, constraints).getResult(0);
  SmallVector<Value> out;
  for (int64_t i = 0; i < count; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, d, i));
  return out;
}

Value TensorCoreEmitter::sharedAddress(Value pointer) {
  return LLVM::PtrToIntOp::create(b, loc, i32(), pointer);
}

void TensorCoreEmitter::mbarrierInit(Value barrier, int64_t count) {
  inlineAsm(Type(), ValueRange{barrier, c32(count)},
            "mbarrier.init.shared::cta.b64 [$0], $1;", "r,r,~{memory}");
}

void TensorCoreEmitter::mbarrierWait(Value barrier, Value parity) {
  // try_wait suspends the thread for a while before it answers; the labels
  // are local to the braces.
  inlineAsm(Type(), ValueRange{barrier, parity},
            "{\n.reg .pred done;\nstrata_wait:\n"
            "mbarrier.try_wait.parity.shared::cta.b64 done, [$0], $1;\n"
            "@!done bra strata_wait;\n}",
            "r,r,~{memory}");
}

void TensorCoreEmitter::mbarrierArrive(Value barrier, Value predicate) {
  if (!predicate) {
    inlineAsm(Type(), ValueRange{barrier},
              "mbarrier.arrive.shared::cta.b64 _, [$0];", "r,~{memory}");
    return;
  }
  inlineAsm(Type(), ValueRange{barrier, predicate},
            "{\n.reg .pred p;\nsetp.ne.b32 p, $1, 0;\n"
            "@p mbarrier.arrive.shared::cta.b64 _, [$0];\n}",
            "r,r,~{memory}");
}

void TensorCoreEmitter::mbarrierArriveExpect(Value barrier, int64_t bytes) {
  inlineAsm(Type(), ValueRange{barrier, c32(bytes)},
            "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;",
            "r,r,~{memory}");
}

void TensorCoreEmitter::tmaLoad2d(Value to, Value map, Value x, Value y,
                                  Value barrier) {
  inlineAsm(Type(), ValueRange{to, map, x, y, barrier},
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::"
            "complete_tx::bytes [$0], [$1, {$2, $3}], [$4];",
            "r,l,r,r,r,~{memory}");
}

void TensorCoreEmitter::tmaStore2d(Value map, Value x, Value y, Value from) {
  inlineAsm(Type(), ValueRange{map, x, y, from},
            "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group "
            "[$0, {$1, $2}], [$3];",
            "l,r,r,r,~{memory}");
}

SmallVector<Value> TensorCoreEmitter::ldmatrix(Value address, bool transpose) {
  auto structType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), {i32(), i32(), i32(), i32()});
  Value result = NVVM::LdMatrixOp::create(
      b, loc, structType, address, 4,
      transpose ? NVVM::MMALayout::col : NVVM::MMALayout::row,
      NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8),
      NVVM::LdStMatrixEltType::B16);
  SmallVector<Value> regs;
  for (int64_t i = 0; i < 4; ++i)
    regs.push_back(LLVM::ExtractValueOp::create(b, loc, result, i));
  return regs;
}

SmallVector<Value> TensorCoreEmitter::mma(ArrayRef<Value> a,
                                          ArrayRef<Value> bFrag,
                                          ArrayRef<Value> c) {
  SmallVector<Value> args;
  // bf16 fragments are passed as i32 words, f16 ones as <2 x half>.
  auto operand = [&](Value word) -> Value {
    if (!f16)
      return word;
    return LLVM::BitcastOp::create(b, loc, VectorType::get({2}, b.getF16Type()),
                                   word);
  };
  for (Value v : a)
    args.push_back(operand(v));
  for (Value v : bFrag)
    args.push_back(operand(v));
  args.append(c.begin(), c.end());
  auto structType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), {f32(), f32(), f32(), f32()});
  StringRef name = f16 ? "llvm.nvvm.mma.m16n8k16.row.col.f32.f32"
                       : "llvm.nvvm.mma.m16n8k16.row.col.bf16";
  Value d = LLVM::CallIntrinsicOp::create(b, loc, structType,
                                          b.getStringAttr(name), args)
                .getResult(0);
  SmallVector<Value> out;
  for (int64_t i = 0; i < 4; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, d, i));
  return out;
}

Value TensorCoreEmitter::packPair(Value lo, Value hi) {
  Value pair = vector::FromElementsOp::create(
      b, loc, VectorType::get({2}, halfType()), ValueRange{lo, hi});
  Value word =
      vector::BitCastOp::create(b, loc, VectorType::get({1}, i32()), pair);
  return vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{0});
}

Value TensorCoreEmitter::pack(Value lo, Value hi) {
  Type half = halfType();
  return packPair(arith::TruncFOp::create(b, loc, half, lo),
                  arith::TruncFOp::create(b, loc, half, hi));
}

LogicalResult TensorCoreEmitter::checkBuffers(StringRef what,
                                              ArrayRef<int64_t> args) {
  int64_t inputs = decl.getNumArguments();
  int64_t buffers = body.getBody().front().getNumArguments();
  if (buffers == inputs + 1 &&
      llvm::all_of(args, [&](int64_t arg) { return arg >= 0 && arg < inputs; }))
    return success();
  return decl.emitError("internal error: ")
         << what << " " << decl.getSymName() << " has " << buffers
         << " buffers for its " << inputs
         << " inputs and one result, or names another";
}

SmallVector<Value> TensorCoreEmitter::resetBody(int64_t threads) {
  MLIRContext *context = b.getContext();
  Block &entry = body.getBody().front();
  // The generic body is replaced whole; the globals only it read go too.
  llvm::SetVector<StringAttr> globals;
  body.walk([&](memref::GetGlobalOp get) {
    globals.insert(get.getNameAttr().getAttr());
  });
  entry.getTerminator()->erase();
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(entry))) {
    op.dropAllUses();
    op.erase();
  }
  for (StringAttr name : globals)
    if (Operation *global = SymbolTable::lookupSymbolIn(kernels, name))
      if (SymbolTable::symbolKnownUseEmpty(global, kernels))
        global->erase();

  // Each buffer as an untyped byte buffer (the executor's bare pointers).
  SmallVector<Type> types;
  for (BlockArgument arg : entry.getArguments()) {
    auto type = cast<MemRefType>(arg.getType());
    int64_t bytes = type.getNumElements() *
                    std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
    auto raw = MemRefType::get({bytes}, b.getI8Type());
    arg.setType(raw);
    types.push_back(raw);
  }
  body.setType(FunctionType::get(context, types, {}));
  body->setAttr("nvvm.maxntid",
                b.getDenseI32ArrayAttr({int32_t(threads), 1, 1}));

  b.setInsertionPointToStart(&entry);
  auto globalPtr = LLVM::LLVMPointerType::get(context, 1);
  SmallVector<Value> pointers;
  for (BlockArgument arg : entry.getArguments()) {
    Value address = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, arg);
    address = arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
    pointers.push_back(LLVM::IntToPtrOp::create(b, loc, globalPtr, address));
  }
  return pointers;
}

Value TensorCoreEmitter::sharedMemory(StringRef name, bool align) {
  if (!kernels.lookupSymbol(name)) {
    OpBuilder mb = OpBuilder::atBlockEnd(kernels.getBody());
    LLVM::GlobalOp::create(mb, loc, LLVM::LLVMArrayType::get(mb.getI8Type(), 0),
                           /*isConstant=*/false, LLVM::Linkage::External, name,
                           Attribute(), /*alignment=*/16, /*addrSpace=*/3);
  }
  auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
  Value base = LLVM::AddressOfOp::create(b, loc, sharedPtr, name);
  if (!align)
    return base;
  Value address = sharedAddress(base);
  return at(base, band(arith::SubIOp::create(b, loc, c32(0), address),
                       kWgmmaAlign - 1));
}

} // namespace strata
