//===- GpuMappingVectors.cpp - the gpu stage: elementwise in vectors ----===//
//
// The part of KernelMapper (GpuMapper.h) that emits the elementwise and
// point-reduction forms: each thread's points, the vector width each
// operand's access allows (contiguous vectors or gathers), and the lanes
// of a vector as iteration points (GpuMappingEmit.cpp has the other forms).
//
//===----------------------------------------------------------------------===//

#include "GpuMapper.h"

namespace strata::gpumap {

void KernelMapper::emitElementwise(linalg::LinalgOp op) {
  b.setInsertionPoint(op);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t total = pointsAndReduced(op).first;
  int64_t vector = plan.vector;
  Value chunk =
      plan.chunks > 1
          ? arith::RemUIOp::create(b, loc, bid, constIndex(b, loc, plan.chunks))
                .getResult()
          : constIndex(b, loc, 0);
  Value linear = arith::MulIOp::create(
      b, loc,
      arith::AddIOp::create(
          b, loc,
          arith::MulIOp::create(b, loc, chunk,
                                constIndex(b, loc, plan.threads)),
          tid),
      constIndex(b, loc, vector));
  // With rows, `linear` counts the points of the row loop's first rows only
  // (emitPointReduction).
  Value inRange =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, linear,
                            constIndex(b, loc, total / plan.rows));
  auto guard = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
  kernel::set<kernel::GpuDistribute>(guard, b.getStringAttr("elementwise"));
  b.setInsertionPointToStart(&guard.getThenRegion().front());
  if (plan.fill) {
    emitPointReduction(op, linear);
    return;
  }
  if (plan.flat) {
    emitFlatLanes(op, linear, ranges, vector);
    op->erase();
    return;
  }
  SmallVector<Value> ivs = delinearize(linear, ranges);

  if (vector == 1) {
    IRMapping mapping = emitPayload(op, ivs, {}, nullptr);
    Operation *yield = op.getBlock()->getTerminator();
    for (auto [value, init] :
         llvm::zip(yield->getOperands(), op.getDpsInitsMutable()))
      memref::StoreOp::create(b, loc, mapping.lookupOrDefault(value),
                              init.get(),
                              applyMap(op.getMatchingIndexingMap(&init), ivs));
    op->erase();
    return;
  }

  LanePoints points{ivs, {}};
  storeLanes(op, points, vector, emitLanes(op, points, vector, nullptr));
  op->erase();
}

/// The output point `linear` (row-major over the parallel loops) of a
/// reduction, its accumulator starting from the fill's value: the fill is
/// not run, as no thread reads another's point. With plan.vector lanes the
/// thread computes that many consecutive points of the innermost loop (a
/// parallel one, pointLanes): one loop nest over the reduced loops carries
/// an accumulator per lane, and what the lanes share (a depthwise
/// convolution's window index and padding test) is computed once.
void KernelMapper::emitPointReduction(linalg::LinalgOp op, Value linear) {
  SmallVector<int64_t> parallelRanges;
  SmallVector<unsigned> parallel;
  for (auto [i, kind] : llvm::enumerate(op.getIteratorTypesArray()))
    if (isParallel(kind)) {
      parallel.push_back(i);
      parallelRanges.push_back(op.getStaticLoopRanges()[i]);
    }
  // With rows, the row loop's extent counts groups of `rows` indices, the
  // thread's first row at the group's first.
  int64_t rows = plan.rows;
  if (rows > 1)
    parallelRanges[llvm::find(parallel, plan.rowDim) - parallel.begin()] /=
        rows;
  SmallVector<Value> ivs(op.getNumLoops());
  for (auto [d, iv] : llvm::zip(parallel, delinearize(linear, parallelRanges)))
    ivs[d] = iv;
  if (rows > 1)
    ivs[plan.rowDim] = arith::MulIOp::create(b, loc, ivs[plan.rowDim],
                                             constIndex(b, loc, rows));
  // Row r's point: the thread's with the row loop's index advanced by r.
  auto rowPoint = [&](ArrayRef<Value> point, int64_t r) {
    SmallVector<Value> at(point);
    if (r)
      at[plan.rowDim] =
          arith::AddIOp::create(b, loc, at[plan.rowDim], constIndex(b, loc, r));
    return at;
  };
  int64_t vector = plan.vector;
  OpOperand *init = op.getDpsInitOperand(0);
  Operation *yield = op.getBlock()->getTerminator();
  // One accumulator per lane and row, carried through the reduced loops.
  // The rows' reads of an operand the row loop does not index are the same
  // loads, which CSE merges.
  SmallVector<Value> values = emitReducedLoops(
      op, ivs, SmallVector<Value>(vector * rows, plan.fill.getInputs()[0]),
      [&](ArrayRef<Value> point, ValueRange iters) {
        SmallVector<Value> next;
        for (int64_t r = 0; r < rows; ++r) {
          LanePoints points{rowPoint(point, r), {}};
          LaneValues given;
          given[init->get()] =
              SmallVector<Value>(iters.slice(r * vector, vector));
          for (IRMapping &lane : emitLanes(op, points, vector, nullptr, &given))
            next.push_back(lane.lookupOrDefault(yield->getOperand(0)));
        }
        return next;
      });
  // The output's map is a projected permutation of the parallel loops
  // (pointPerThread): the reduced loops' entries of `ivs` stay unset.
  if (!plan.epilogue) {
    for (int64_t r = 0; r < rows; ++r) {
      SmallVector<IRMapping> results(vector);
      for (int64_t l = 0; l < vector; ++l)
        results[l].map(yield->getOperand(0), values[r * vector + l]);
      LanePoints points{rowPoint(ivs, r), {}};
      storeLanes(op, points, vector, results);
    }
    op->erase();
    plan.fill->erase();
    return;
  }
  // The epilogue at the same points (pointEpilogue: its loops are the
  // reduction's parallel ones, in order), its read of the temporary
  // replaced by the values just computed.
  linalg::LinalgOp epilogue = plan.epilogue;
  for (int64_t r = 0; r < rows; ++r) {
    SmallVector<Value> at = rowPoint(ivs, r);
    SmallVector<Value> epilogueIvs;
    for (unsigned d : parallel)
      epilogueIvs.push_back(at[d]);
    LanePoints points{epilogueIvs, {}};
    LaneValues given;
    given[init->get()] =
        SmallVector<Value>(ArrayRef(values).slice(r * vector, vector));
    storeLanes(epilogue, points, vector,
               emitLanes(epilogue, points, vector, nullptr, &given));
  }
  epilogue->erase();
  op->erase();
  plan.fill->erase();
  if (plan.epilogueTemp && plan.epilogueTemp->use_empty())
    plan.epilogueTemp->erase();
}

/// Elements per thread access along `op`'s innermost loop, from the
/// operands indexed by that loop: 16 bytes of the widest element, or, with
/// `narrowest`, 16 bytes of the narrowest (a bf16 input read 8 elements at a
/// time, an f32 result written as two 16-byte pieces) up to 32 bytes of the
/// widest. 1 when the loop's extent is not a multiple of it; with
/// `divisor`, the largest power of two below it that divides the extent
/// instead (4 lanes along 4 channels rather than none).
int64_t KernelMapper::innermostVector(linalg::LinalgOp op, bool narrowest,
                                      bool divisor) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ranges.empty())
    return 1;
  int64_t widest = 0, narrow = 0;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type ||
        !op.getMatchingIndexingMap(&operand).isFunctionOfDim(ranges.size() - 1))
      continue;
    int64_t bytes = elementBytes(type.getElementType());
    widest = std::max(widest, bytes);
    if (type.getElementType().getIntOrFloatBitWidth() >= 8)
      narrow = narrow ? std::min(narrow, bytes) : bytes;
  }
  int64_t vector = widest ? kVectorBytes / widest : 1;
  if (narrowest && narrow)
    vector = std::max(
        vector, std::min(kVectorBytes / narrow, 2 * kVectorBytes / widest));
  if (divisor)
    while (vector > 1 && ranges.back() % vector != 0)
      vector /= 2;
  if (vector > 1 && ranges.back() % vector != 0)
    vector = 1;
  return vector;
}

/// When the innermost loop's extent allows no vector (a slice to 50257
/// columns), the elements per thread for the flat iteration space instead:
/// 16 bytes of the result when every result is written in iteration order
/// (identity indexing into a contiguous, 16-byte aligned buffer) and the
/// total is a multiple of it. The outputs are then written 16 bytes at a
/// time at the flat index; the inputs are read element by element, which
/// consecutive threads still read in order. 1 otherwise.
int64_t KernelMapper::flatVector(linalg::LinalgOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ranges.size() < 2 || ShapedType::isDynamicShape(ranges))
    return 1;
  int64_t bytes = 0;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    auto type = dyn_cast<MemRefType>(init.get().getType());
    if (!type || !type.getLayout().isIdentity() || !type.hasStaticShape() ||
        !op.getMatchingIndexingMap(&init).isIdentity() ||
        !op.getMatchingBlockArgument(&init).use_empty() ||
        type.getElementType().getIntOrFloatBitWidth() < 8)
      return 1;
    // Planned before the parameters become views (emitEntry).
    auto arg = dyn_cast<BlockArgument>(init.get());
    if (!arg || parameterAlignment(arg.getArgNumber()) % kVectorBytes != 0)
      return 1;
    int64_t size = elementBytes(type.getElementType());
    if (bytes && size != bytes)
      return 1;
    bytes = size;
  }
  if (!bytes)
    return 1;
  int64_t vector = kVectorBytes / bytes;
  return vector > 1 && llvm::product_of(ranges) % vector == 0 ? vector : 1;
}

/// `vector` consecutive iterations of the flat iteration space from
/// `linear` (flatVector): each lane's point delinearized, the inputs read
/// per lane, the results stored as one vector into the flattened output.
void KernelMapper::emitFlatLanes(linalg::LinalgOp op, Value linear,
                                 ArrayRef<int64_t> ranges, int64_t vector) {
  SmallVector<SmallVector<Value>> points;
  SmallVector<IRMapping> lanes(vector);
  for (int64_t l = 0; l < vector; ++l)
    points.push_back(delinearize(
        l ? arith::AddIOp::create(b, loc, linear, constIndex(b, loc, l))
                .getResult()
          : linear,
        ranges));
  for (OpOperand *input : op.getDpsInputOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(input);
    if (arg.use_empty())
      continue;
    if (!isa<MemRefType>(input->get().getType())) {
      for (IRMapping &lane : lanes)
        lane.map(arg, input->get());
      continue;
    }
    AffineMap map = op.getMatchingIndexingMap(input);
    for (int64_t l = 0; l < vector; ++l)
      lanes[l].map(arg, memref::LoadOp::create(b, loc, input->get(),
                                               applyMap(map, points[l])));
  }
  for (int64_t l = 0; l < vector; ++l)
    for (Operation &inner : op.getBlock()->without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        lanes[l].map(index.getResult(), points[l][index.getDim()]);
        continue;
      }
      b.clone(inner, lanes[l]);
    }
  Operation *yield = op.getBlock()->getTerminator();
  for (auto [k, init] : llvm::enumerate(op.getDpsInitsMutable())) {
    auto type = cast<MemRefType>(init.get().getType());
    SmallVector<Value> values;
    for (const IRMapping &lane : lanes)
      values.push_back(lane.lookupOrDefault(yield->getOperand(k)));
    SmallVector<ReassociationIndices> all(1);
    for (int64_t d = 0; d < type.getRank(); ++d)
      all[0].push_back(d);
    Value flat = memref::CollapseShapeOp::create(b, loc, init.get(), all);
    Value v = vector::FromElementsOp::create(
        b, loc, VectorType::get({vector}, type.getElementType()), values);
    vector::StoreOp::create(b, loc, v, flat, ValueRange{linear},
                            /*nontemporal=*/false,
                            llvm::MaybeAlign(kVectorBytes));
  }
}

/// Elements one lane of a cooperative reduction reads per access: a 16-byte
/// vector when the innermost loop is reduced and an input is contiguous
/// along it, else 1.
int64_t KernelMapper::reductionVector(linalg::LinalgOp op) {
  SmallVector<utils::IteratorType> kinds = op.getIteratorTypesArray();
  if (kinds.empty() || isParallel(kinds.back()))
    return 1;
  int64_t vector = innermostVector(op, /*narrowest=*/true);
  if (vector == 1)
    return 1;
  for (OpOperand *input : op.getDpsInputOperands())
    if (isa<MemRefType>(input->get().getType()) &&
        accessOf(op, *input, vector) == Access::Vector)
      return vector;
  return 1;
}

/// How `operand` is accessed at `vector` consecutive iterations of the
/// innermost loop: one vector access when it is contiguous along that loop
/// and aligned for it, once when the loop does not index it, else element
/// by element.
Access KernelMapper::accessOf(linalg::LinalgOp op, OpOperand &operand,
                              int64_t vector) {
  unsigned last = op.getNumLoops() - 1;
  AffineMap map = op.getMatchingIndexingMap(&operand);
  auto type = cast<MemRefType>(operand.get().getType());
  if (!map.isFunctionOfDim(last))
    return Access::Broadcast;
  int64_t bytes = elementBytes(type.getElementType());
  bool contiguous =
      type.getLayout().isIdentity() && type.getRank() >= 1 &&
      map.getResults().back() == getAffineDimExpr(last, b.getContext()) &&
      type.getShape().back() % vector == 0 &&
      type.getElementType().getIntOrFloatBitWidth() >= 8 &&
      baseAlignment(operand.get()) % vectorAlignment(bytes, vector) == 0;
  return contiguous ? Access::Vector : Access::Gather;
}

/// Lane `lane`'s iteration point: the first with the innermost index
/// advanced by `lane`.
ArrayRef<Value> KernelMapper::lanePoint(LanePoints &points, int64_t lane) {
  if (points.lanes.size() <= static_cast<size_t>(lane))
    points.lanes.resize(lane + 1);
  SmallVector<Value> &ivs = points.lanes[lane];
  if (ivs.empty()) {
    ivs = points.first;
    if (lane)
      ivs.back() = arith::AddIOp::create(b, loc, points.first.back(),
                                         constIndex(b, loc, lane));
  }
  return ivs;
}

/// The payload of `op` at `vector` consecutive iterations of its innermost
/// loop: each operand read once per accessOf, then the body once per lane
/// (without `skip`, a reduction's combiner, whose accumulator is then not
/// read). An operand in `given` is not read: each lane takes its value
/// there (a running accumulator, a result computed before). Returns each
/// lane's values.
SmallVector<IRMapping> KernelMapper::emitLanes(linalg::LinalgOp op,
                                               LanePoints &points,
                                               int64_t vector, Operation *skip,
                                               const LaneValues *given) {
  SmallVector<IRMapping> lanes(vector);
  for (OpOperand &operand : op->getOpOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(&operand);
    if (given)
      if (auto it = given->find(operand.get()); it != given->end()) {
        for (int64_t l = 0; l < vector; ++l)
          lanes[l].map(arg, it->second[l]);
        continue;
      }
    bool accumulator = op.isDpsInit(&operand) && skip;
    if (arg.use_empty() ||
        (accumulator && llvm::all_of(arg.getUsers(), [&](Operation *user) {
           return user == skip;
         })))
      continue;
    if (!isa<MemRefType>(operand.get().getType())) {
      for (IRMapping &lane : lanes)
        lane.map(arg, operand.get());
      continue;
    }
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (registerGroup >= 0)
      if (Value root = registerRoot(operand.get())) {
        // A register buffer: its values at this group, which an input's
        // first reader loads.
        SmallVector<Value> &groups = registerValues[root];
        groups.resize(plan.registers.groups);
        if (!groups[registerGroup]) {
          assert(parameterOf(root) && parameterOf(root)->input &&
                 "planRegisters: a register buffer is read before written");
          Type element =
              cast<MemRefType>(operand.get().getType()).getElementType();
          auto type = VectorType::get({vector}, element);
          if (accessOf(op, operand, vector) == Access::Vector) {
            groups[registerGroup] = vector::LoadOp::create(
                b, loc, type, operand.get(), applyMap(map, points.first),
                /*nontemporal=*/false,
                llvm::MaybeAlign(
                    vectorAlignment(elementBytes(element), vector)));
          } else {
            SmallVector<Value> values;
            for (int64_t l = 0; l < vector; ++l)
              values.push_back(memref::LoadOp::create(
                  b, loc, operand.get(), applyMap(map, lanePoint(points, l))));
            groups[registerGroup] =
                vector::FromElementsOp::create(b, loc, type, values);
          }
        }
        for (int64_t l = 0; l < vector; ++l)
          lanes[l].map(
              arg, vector::ExtractOp::create(b, loc, groups[registerGroup], l));
        continue;
      }
    switch (accessOf(op, operand, vector)) {
    case Access::Vector: {
      Type element = cast<MemRefType>(operand.get().getType()).getElementType();
      Value v = vector::LoadOp::create(
          b, loc, VectorType::get({vector}, element), operand.get(),
          applyMap(map, points.first), /*nontemporal=*/false,
          llvm::MaybeAlign(vectorAlignment(elementBytes(element), vector)));
      for (int64_t l = 0; l < vector; ++l)
        lanes[l].map(arg, vector::ExtractOp::create(b, loc, v, l));
      break;
    }
    case Access::Broadcast: {
      Value v =
          registerGroup >= 0 &&
                  cast<MemRefType>(operand.get().getType()).getNumElements() ==
                      1
              ? knownScalars.lookup(viewRoot(operand.get()))
              : Value();
      if (!v)
        v = memref::LoadOp::create(b, loc, operand.get(),
                                   applyMap(map, points.first));
      for (IRMapping &lane : lanes)
        lane.map(arg, v);
      break;
    }
    case Access::Gather:
      for (int64_t l = 0; l < vector; ++l)
        lanes[l].map(
            arg, memref::LoadOp::create(b, loc, operand.get(),
                                        applyMap(map, lanePoint(points, l))));
      break;
    }
  }
  for (int64_t l = 0; l < vector; ++l)
    for (Operation &inner : op.getBlock()->without_terminator()) {
      if (&inner == skip)
        continue;
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        lanes[l].map(index.getResult(), lanePoint(points, l)[index.getDim()]);
        continue;
      }
      b.clone(inner, lanes[l]);
    }
  return lanes;
}

/// Writes what each lane yields: one vector store per contiguous output,
/// else element by element.
void KernelMapper::storeLanes(linalg::LinalgOp op, LanePoints &points,
                              int64_t vector, ArrayRef<IRMapping> lanes) {
  Operation *yield = op.getBlock()->getTerminator();
  for (auto [k, init] : llvm::enumerate(op.getDpsInitsMutable())) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    SmallVector<Value> values;
    for (const IRMapping &lane : lanes)
      values.push_back(lane.lookupOrDefault(yield->getOperand(k)));
    Type element = cast<MemRefType>(init.get().getType()).getElementType();
    if (registerGroup >= 0)
      if (Value root = registerRoot(init.get())) {
        bool final = registerFinalWriters.lookup(root) == op.getOperation();
        if (!final || registerWriteThrough.contains(root)) {
          SmallVector<Value> &groups = registerValues[root];
          groups.resize(plan.registers.groups);
          groups[registerGroup] = vector::FromElementsOp::create(
              b, loc, VectorType::get({vector}, element), values);
        }
        if (!final)
          continue;
      }
    if (accessOf(op, init, vector) == Access::Vector) {
      Value v = vector::FromElementsOp::create(
          b, loc, VectorType::get({vector}, element), values);
      vector::StoreOp::create(
          b, loc, v, init.get(), applyMap(map, points.first),
          /*nontemporal=*/false,
          llvm::MaybeAlign(vectorAlignment(elementBytes(element), vector)));
    } else {
      for (int64_t l = 0; l < vector; ++l)
        memref::StoreOp::create(b, loc, values[l], init.get(),
                                applyMap(map, lanePoint(points, l)));
    }
  }
}

void KernelMapper::emitThread0(Operation *op) {
  flushScalars(op);
  knownScalars.clear();
  b.setInsertionPoint(op);
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                                      constIndex(b, loc, 0));
  auto ifOp = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
  kernel::set<kernel::GpuDistribute>(ifOp, b.getStringAttr("thread0"));
  op->moveBefore(ifOp.getThenRegion().front().getTerminator());
  b.setInsertionPointAfter(ifOp);
  gpu::BarrierOp::create(b, loc);
}

} // namespace strata::gpumap
