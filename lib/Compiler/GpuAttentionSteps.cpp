//===- GpuAttentionSteps.cpp - the flash-attention kernel's key steps -----===//
//
// The flash-attention kernel's key steps (GpuAttention.cpp's file comment):
// S = Q Kᵀ on wgmma or mma.sync, the bias and the causal mask, the online
// softmax, O's rescale and O += P V, the step loops (plain, or
// software-pipelined), and the epilogue's O / l.
//
//===----------------------------------------------------------------------===//

#include "GpuAttentionEmitter.h"

#include "Gpu.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include "llvm/ADT/DenseMap.h"

#include <cmath>
#include <limits>

using namespace mlir;
using strata::forLoop;

namespace strata::attention {

namespace {
// When pipelined, a row's max moves only when a step's scores pass it by
// more than kStaleMaxLog2 (FlashAttention-4's rescaling threshold): the
// exponentials then stay below 2^8 and O and l below 2^8 times their exact
// values, which the f32 accumulators and P's bf16 or f16 hold as exactly,
// and O / l is the same for any max. Most steps then leave every row's max,
// and a warp whose rows all kept theirs skips O's rescale (rescale).
// Measured on the H200 with 64-key steps (2026-12-01 12:52): d128 s4k 4.37
// -> 4.28 ms, and 4.22-4.26 with O rescaled under the next S.
constexpr double kStaleMaxLog2 = 8.0;
// A bias's masked entries are made finite so that a key step every key of
// which a row's mask drops cannot turn the running max (and with it O) into
// NaN: -inf becomes kMaskedLog2 and anything finite is kept above
// kLowestLog2, 10 times higher. A row's final max below kMaskedLog2 / 2 then
// means every key had -inf (the reference's NaN, or 0 under zeroMaskedRows:
// the epilogue), while a row whose keys all carry the type's lowest value
// gets their uniform weights, as the softmax of equal scores does.
constexpr double kMaskedLog2 = -1e38, kLowestLog2 = -1e37;
} // namespace

Value FlashEmitter::exp2(Value x) {
  return LLVM::CallIntrinsicOp::create(
             b, loc, f32(), b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f32"),
             ValueRange{x})
      .getResult(0);
}

/// The first row of m-tile mt that warp w owns: with mma.sync, warp w owns
/// rows [w * 16 * mTiles, (w + 1) * 16 * mTiles); a warpgroup product gives
/// warp w rows [16 w, 16 w + 16) of each 64-row m-tile.
Value FlashEmitter::warpRow(int64_t mt) {
  return wgmma ? add(shl(warp, 4), c32(64 * mt))
               : add(mul(warp, c32(16 * mTiles)), c32(16 * mt));
}

/// The loops' first state, per m-tile: O's accumulators (dim/8 tiles of 4),
/// then m and l for the thread's two rows (group and group + 8).
SmallVector<Value> FlashEmitter::initialState() {
  SmallVector<Value> init(oCount, cf(0.0));
  negInf = cf(-std::numeric_limits<double>::infinity());
  init.append(2 * mTiles, negInf);
  init.append(2 * mTiles, cf(0.0));
  return init;
}

/// The descriptors of a stage's K and V tiles: the stages' tiles are
/// consecutive.
Value FlashEmitter::stageOffset(Value stage) {
  return wide(mul(stage, c32(tileBytes >> 4)));
}

/// S = Q Kᵀ on wgmma, the K tile in `stage`: one warpgroup product per
/// m-tile and 16 columns of Q (the k-step's 32 bytes within a 128-byte half
/// row), issued and committed; the caller waits for them.
FlashEmitter::PerTile FlashEmitter::issueScores(Value stage, bool fence) {
  Value kDesc = arith::AddIOp::create(b, loc, kDesc0, stageOffset(stage));
  Value poison = LLVM::PoisonOp::create(b, loc, f32());
  if (fence)
    asmBarrier("wgmma.fence.sync.aligned;");
  PerTile acc(mTiles, SmallVector<Value>(keys / 2, poison));
  for (int64_t mt = 0; mt < mTiles; ++mt)
    for (int64_t kk = 0; kk < kSteps; ++kk)
      acc[mt] =
          wgmmaStep(acc[mt],
                    advance(qDesc, (kk / 4) * tileRows * 128 + mt * 64 * 128 +
                                       (kk % 4) * 32),
                    {}, advance(kDesc, (kk / 4) * keys * 128 + (kk % 4) * 32),
                    /*transposeB=*/false, /*accumulate=*/kk > 0);
  asmBarrier("wgmma.commit_group.sync.aligned;");
  return acc;
}

/// wgmma's accumulators, once waited for, as S's per m-tile, tiles of 8
/// keys.
FlashEmitter::Scores FlashEmitter::toScores(PerTile acc) {
  Scores s(mTiles, SmallVector<SmallVector<Value>>(keys / 8));
  for (int64_t mt = 0; mt < mTiles; ++mt) {
    acc[mt] = fenceOperands(acc[mt]);
    for (int64_t nt = 0; nt < keys / 8; ++nt)
      s[mt][nt].assign(acc[mt].begin() + 4 * nt, acc[mt].begin() + 4 * nt + 4);
  }
  return s;
}

/// S = Q Kᵀ, the K tile in `stage`, computed and waited for.
FlashEmitter::Scores FlashEmitter::scores(Value stage) {
  if (wgmma) {
    PerTile acc = issueScores(stage);
    asmBarrier("wgmma.wait_group.sync.aligned 0;");
    return toScores(acc);
  }
  // Each K fragment feeds every m-tile.
  Value zero = cf(0.0);
  Scores s(mTiles, SmallVector<SmallVector<Value>>(
                       keys / 8, SmallVector<Value>(4, zero)));
  Value kBase = kTile(stage);
  Value row = add(band(lane, 7), shl(shr(lane, 4), 3));
  Value half = band(shr(lane, 3), 1);
  for (int64_t np = 0; np < keys / 16; ++np)
    for (int64_t kk = 0; kk < kSteps; ++kk) {
      SmallVector<Value> r =
          ldmatrix(at(kBase, swizzled(add(row, c32(np * 16)),
                                      add(c32(kk * 2), half), keys)),
                   false);
      for (int64_t mt = 0; mt < mTiles; ++mt) {
        s[mt][2 * np] = mma(qFrag[mt][kk], {r[0], r[1]}, s[mt][2 * np]);
        s[mt][2 * np + 1] = mma(qFrag[mt][kk], {r[2], r[3]}, s[mt][2 * np + 1]);
      }
    }
  return s;
}

// Where element e of S's tile (mt, nt) lies, in the accumulators' layout:
// the thread's rows group and group + 8 of the m-tile, its keys 2 * quad and
// 2 * quad + 1 of the 8-key tile. `key0` is the step's first key for this
// thread (firstKey).
Value FlashEmitter::firstKey(Value step) {
  return add(mul(step, c32(keys)), shl(quad, 1));
}
Value FlashEmitter::fragmentRow(int64_t mt, int64_t e) {
  return add(add(myRow0, warpRow(mt)), c32(8 * (e / 2)));
}
Value FlashEmitter::fragmentKey(Value key0, int64_t nt, int64_t e) {
  return add(key0, c32(nt * 8 + e % 2));
}

/// The scores of key step `step` scaled into the log2 domain with the bias
/// added: x * scale / ln 2 + bias * factor / ln 2, one multiply-add. The
/// bias is read once per (row, key) the thread holds, once per key when it
/// is broadcast over the rows; its masked entries are made finite
/// (kMaskedLog2).
void FlashEmitter::addBias(Value step, Scores &s) {
  Value key0 = firstKey(step);
  llvm::DenseMap<std::pair<int64_t, int64_t>, Value> loaded;
  auto term = [&](int64_t mt, int64_t e, int64_t nt) {
    int64_t rowKey = bias->rowStride ? 2 * mt + e / 2 : -1;
    Value &cached = loaded[{rowKey, nt * 2 + e % 2}];
    if (cached)
      return cached;
    Value keyIndex = fragmentKey(key0, nt, e);
    Value elements =
        arith::MulIOp::create(b, loc, wide(keyIndex), c64(bias->keyStride));
    if (bias->rowStride) {
      Value row = fragmentRow(mt, e);
      elements = arith::AddIOp::create(
          b, loc, elements,
          arith::MulIOp::create(b, loc, wide(row), c64(bias->rowStride)));
    }
    Value x = LLVM::LoadOp::create(
        b, loc, bias->type,
        at(biasSrc, arith::MulIOp::create(b, loc, elements, c64(biasBytes))));
    if (!x.getType().isF32())
      x = arith::ExtFOp::create(b, loc, f32(), x);
    x = arith::MulFOp::create(b, loc, x, cf(bias->factor / std::log(2.0)));
    Value dropped =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x,
                              cf(-std::numeric_limits<double>::infinity()));
    x = arith::SelectOp::create(
        b, loc, dropped, cf(kMaskedLog2),
        arith::MaxNumFOp::create(b, loc, x, cf(kLowestLog2)));
    cached = x;
    return x;
  };
  for (int64_t mt = 0; mt < mTiles; ++mt)
    for (int64_t nt = 0; nt < keys / 8; ++nt)
      for (int64_t e = 0; e < 4; ++e) {
        Value &x = s[mt][nt][e];
        x = arith::AddFOp::create(
            b, loc,
            arith::MulFOp::create(b, loc, x, cf(scaleLog2),
                                  arith::FastMathFlags::contract),
            term(mt, e, nt), arith::FastMathFlags::contract);
      }
}

/// The causal mask, on the key steps that cross the diagonal only: a step
/// is masked when its last key is past the block's first row's limit (every
/// other step is whole for every row).
void FlashEmitter::maskCausal(Value step, Scores &s) {
  Value lastKey = add(mul(step, c32(keys)), c32(keys - 1));
  Value crosses = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                        lastKey, add(myQ0, c32(*causalOffset)));
  SmallVector<Value> flat;
  for (auto &tile : s)
    for (auto &fragment : tile)
      flat.append(fragment.begin(), fragment.end());
  SmallVector<Type> types(flat.size(), f32());
  auto masked = scf::IfOp::create(b, loc, types, crosses, true);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(masked.thenBlock());
    SmallVector<Value> kept;
    Value key0 = firstKey(step);
    for (int64_t mt = 0; mt < mTiles; ++mt)
      for (int64_t nt = 0; nt < keys / 8; ++nt)
        for (int64_t e = 0; e < 4; ++e) {
          Value limit = add(fragmentRow(mt, e), c32(*causalOffset));
          Value keyIndex = fragmentKey(key0, nt, e);
          Value keep = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                             keyIndex, limit);
          kept.push_back(
              arith::SelectOp::create(b, loc, keep, s[mt][nt][e], negInf));
        }
    scf::YieldOp::create(b, loc, kept);
    b.setInsertionPointToStart(masked.elseBlock());
    scf::YieldOp::create(b, loc, flat);
  }
  size_t i = 0;
  for (auto &tile : s)
    for (auto &fragment : tile)
      for (Value &x : fragment)
        x = masked.getResult(i++);
}

/// The causal mask and the online softmax of key step `step`'s scores:
/// updates m and l (the thread's 2 rows per m-tile), and returns P, S's
/// exponentials packed as the A fragments of P V (per m-tile, four words per
/// 16 keys), and each row's correction of O.
FlashEmitter::PerTile FlashEmitter::softmax(Value step, Scores s,
                                            MutableArrayRef<Value> m,
                                            MutableArrayRef<Value> l,
                                            SmallVector<Value> &corrections) {
  // With a positive scale the maximum is taken of the raw scores and each
  // exponent is one fused multiply-add, s * scale - m (below). Any other
  // scale is applied first, so that the mask's -inf stays -inf (masked
  // before a negative scale it became +inf, and NaN with a zero one).
  bool positive = scaleLog2 > 0 && !bias;
  if (bias)
    addBias(step, s);
  else if (!positive)
    for (auto &tile : s)
      for (auto &fragment : tile)
        for (Value &x : fragment)
          x = arith::MulFOp::create(b, loc, x, cf(scaleLog2));
  if (causalOffset)
    maskCausal(step, s);

  // Per m-tile and row half h.
  corrections.clear();
  for (int64_t mt = 0; mt < mTiles; ++mt)
    for (int64_t h = 0; h < 2; ++h) {
      int64_t r = 2 * mt + h;
      SmallVector<Value> row;
      for (int64_t nt = 0; nt < keys / 8; ++nt)
        for (int64_t e = 0; e < 2; ++e)
          row.push_back(s[mt][nt][2 * h + e]);
      // Trees (combinePairwise): the row max and sum are on each key step's
      // critical path.
      Value rowMax =
          strata::combinePairwise(row, [&](Value x, Value y) -> Value {
            return arith::MaxNumFOp::create(b, loc, x, y);
          });
      for (int32_t mask : {1, 2})
        rowMax =
            arith::MaxNumFOp::create(b, loc, rowMax, shuffleXor(rowMax, mask));
      if (positive)
        rowMax = arith::MulFOp::create(b, loc, rowMax, cf(scaleLog2));
      Value mNew;
      if (staleMax) {
        // A first finite max always moves m (its distance from -inf is
        // +inf); a row masked whole keeps its m (NaN > 8 is false).
        Value grow = arith::CmpFOp::create(
            b, loc, arith::CmpFPredicate::OGT,
            arith::SubFOp::create(b, loc, rowMax, m[r]), cf(kStaleMaxLog2));
        mNew = arith::SelectOp::create(b, loc, grow, rowMax, m[r]);
      } else {
        mNew = arith::MaxNumFOp::create(b, loc, m[r], rowMax);
      }
      Value correction =
          exp2(arith::SubFOp::create(b, loc, m[r], mNew).getResult());
      SmallVector<Value> terms;
      for (int64_t nt = 0; nt < keys / 8; ++nt)
        for (int64_t e = 0; e < 2; ++e) {
          Value &x = s[mt][nt][2 * h + e];
          Value exponent =
              positive
                  ? arith::SubFOp::create(
                        b, loc,
                        arith::MulFOp::create(b, loc, x, cf(scaleLog2),
                                              arith::FastMathFlags::contract),
                        mNew, arith::FastMathFlags::contract)
                        .getResult()
                  : arith::SubFOp::create(b, loc, x, mNew).getResult();
          x = exp2(exponent);
          terms.push_back(x);
        }
      Value sum =
          strata::combinePairwise(terms, [&](Value x, Value y) -> Value {
            return arith::AddFOp::create(b, loc, x, y);
          });
      l[r] = arith::AddFOp::create(
          b, loc, arith::MulFOp::create(b, loc, l[r], correction), sum);
      m[r] = mNew;
      corrections.push_back(correction);
    }
  PerTile p(mTiles);
  for (int64_t mt = 0; mt < mTiles; ++mt)
    for (int64_t ks = 0; ks < keys / 16; ++ks) {
      auto &t0 = s[mt][2 * ks], &t1 = s[mt][2 * ks + 1];
      p[mt].append({pack(t0[0], t0[1]), pack(t0[2], t0[3]), pack(t1[0], t1[1]),
                    pack(t1[2], t1[3])});
    }
  return p;
}

/// O rescaled by each row's correction (exactly 1 where the row's max did
/// not move). With the stale max (staleMax) a warp whose rows all kept
/// theirs skips it, a branch on a warp vote; without, most steps move some
/// row's max, and skipping behind a branch was slower on the H200
/// (bench/RESULTS.md, 2026-11-30 12:41).
void FlashEmitter::rescale(MutableArrayRef<Value> o,
                           ArrayRef<Value> corrections) {
  std::optional<OpBuilder::InsertionGuard> guard;
  scf::IfOp skip;
  if (staleMax) {
    Value any = arith::ConstantIntOp::create(b, loc, 0, 1);
    for (Value c : corrections)
      any = arith::OrIOp::create(
          b, loc, any,
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, c, cf(1.0)));
    Value warpAny = NVVM::VoteSyncOp::create(b, loc, b.getI1Type(), c32(-1),
                                             any, NVVM::VoteSyncKind::any);
    SmallVector<Type> types(o.size(), f32());
    skip = scf::IfOp::create(b, loc, types, warpAny, true);
    guard.emplace(b);
    b.setInsertionPointToStart(skip.elseBlock());
    scf::YieldOp::create(b, loc, SmallVector<Value>(o.begin(), o.end()));
    b.setInsertionPointToStart(skip.thenBlock());
  }
  for (int64_t mt = 0; mt < mTiles; ++mt)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t dt = 0; dt < oTiles; ++dt)
        for (int64_t e = 0; e < 2; ++e) {
          Value &acc = o[oIndex(mt, dt, 2 * h + e)];
          acc = arith::MulFOp::create(b, loc, acc, corrections[2 * mt + h]);
        }
  if (staleMax) {
    scf::YieldOp::create(b, loc, SmallVector<Value>(o.begin(), o.end()));
    guard.reset();
    for (size_t i = 0; i < o.size(); ++i)
      o[i] = skip.getResult(i);
  }
}

/// wgmma's operands of O += P V, O's accumulators and P's words, fenced:
/// nothing computing them moves past this point.
void FlashEmitter::fenceProductOperands(MutableArrayRef<Value> o, PerTile &p) {
  for (int64_t mt = 0; mt < mTiles; ++mt) {
    SmallVector<Value> both(o.begin() + mt * perTile,
                            o.begin() + (mt + 1) * perTile);
    both.append(p[mt]);
    both = fenceOperands(both);
    std::copy(both.begin(), both.begin() + perTile, o.begin() + mt * perTile);
    p[mt].assign(both.begin() + perTile, both.end());
  }
}

/// O += P V, V's tile in `stage`. With wgmma the products are committed
/// and, with `wait`, waited for (else O's accumulators are still being
/// written: the caller waits before reading them). `fenced`: the caller
/// fenced the operands and issued wgmma.fence.
void FlashEmitter::attend(MutableArrayRef<Value> o, PerTile p, Value stage,
                          bool wait, bool fenced) {
  if (wgmma) {
    // One warpgroup product per m-tile and 16 keys, P from registers, V
    // MN-major (its rows are keys): 16 keys are 2048 bytes.
    Value vDesc = arith::AddIOp::create(b, loc, vDesc0, stageOffset(stage));
    if (!fenced) {
      fenceProductOperands(o, p);
      asmBarrier("wgmma.fence.sync.aligned;");
    }
    for (int64_t mt = 0; mt < mTiles; ++mt)
      for (int64_t ks = 0; ks < keys / 16; ++ks) {
        SmallVector<Value> d =
            wgmmaStep(ArrayRef<Value>(o).slice(mt * perTile, perTile), Value(),
                      ArrayRef<Value>(p[mt]).slice(4 * ks, 4),
                      advance(vDesc, ks * 16 * 128), /*transposeB=*/true,
                      /*accumulate=*/true);
        std::copy(d.begin(), d.end(), o.begin() + mt * perTile);
      }
    asmBarrier("wgmma.commit_group.sync.aligned;");
    if (wait)
      asmBarrier("wgmma.wait_group.sync.aligned 0;");
    for (int64_t mt = 0; mt < mTiles; ++mt) {
      SmallVector<Value> fenced =
          fenceOperands(ArrayRef<Value>(o).slice(mt * perTile, perTile));
      std::copy(fenced.begin(), fenced.end(), o.begin() + mt * perTile);
    }
    return;
  }
  // Each V fragment feeds every m-tile.
  Value vBase = vTile(stage);
  Value row = add(band(lane, 7), shl(band(shr(lane, 3), 1), 3));
  Value half = shr(lane, 4);
  for (int64_t ks = 0; ks < keys / 16; ++ks) {
    for (int64_t dp = 0; dp < dim / 16; ++dp) {
      SmallVector<Value> r =
          ldmatrix(at(vBase, swizzled(add(row, c32(ks * 16)),
                                      add(c32(dp * 2), half), keys)),
                   true);
      for (int64_t mt = 0; mt < mTiles; ++mt)
        for (int64_t j = 0; j < 2; ++j) {
          int64_t first = oIndex(mt, 2 * dp + j, 0);
          SmallVector<Value> d =
              mma(ArrayRef<Value>(p[mt]).slice(4 * ks, 4),
                  {r[2 * j], r[2 * j + 1]}, ArrayRef<Value>(o).slice(first, 4));
          std::copy(d.begin(), d.end(), o.begin() + first);
        }
    }
  }
}

FlashEmitter::StepState FlashEmitter::unpackState(ValueRange values,
                                                  bool withP) {
  auto it = values.begin();
  auto take = [&](int64_t n) {
    SmallVector<Value> part(it, it + n);
    it += n;
    return part;
  };
  StepState state{take(oCount), take(2 * mTiles), take(2 * mTiles), {}};
  if (withP) {
    for (int64_t mt = 0; mt < mTiles; ++mt)
      state.p.push_back(take(pWords));
    state.c = take(2 * mTiles);
  }
  return state;
}

SmallVector<Value> FlashEmitter::packState(const StepState &state) {
  SmallVector<Value> values = state.o;
  values.append(state.m.begin(), state.m.end());
  values.append(state.l.begin(), state.l.end());
  for (const SmallVector<Value> &words : state.p)
    values.append(words.begin(), words.end());
  values.append(state.c.begin(), state.c.end());
  return values;
}

/// The key steps one after another: each loads the next tile while it
/// computes this one's S, softmax and P V.
SmallVector<Value> FlashEmitter::keySteps(ArrayRef<Value> init) {
  ValueRange done =
      forLoop(b, loc, c32(0), stepCount, 1, init,
              [&](Value step, ValueRange state) -> SmallVector<Value> {
                Value stage = stageOf(step);
                // The next tiles load while this one is used. (Issuing them
                // after this step's wait and barrier instead, which saves the
                // barrier at the end of the step, was 4% slower at head
                // dimension 64 on the H200: bench/RESULTS.md, 2026-11-30
                // 12:54.)
                prefetch(add(step, c32(1)));
                NVVM::CpAsyncCommitGroupOp::create(b, loc);
                NVVM::CpAsyncWaitGroupOp::create(b, loc, 1);
                if (wgmma)
                  asmBarrier("fence.proxy.async.shared::cta;");
                syncCompute();

                StepState now = unpackState(state, /*withP=*/false);
                SmallVector<Value> corrections;
                PerTile p =
                    softmax(step, scores(stage), now.m, now.l, corrections);
                rescale(now.o, corrections);
                attend(now.o, p, stage, /*wait=*/true);
                // Every warp is done with this stage before it is loaded again.
                syncCompute();
                return packState(now);
              });
  return SmallVector<Value>(done.begin(), done.end());
}

/// Software-pipelined key steps (FA3's intra-warpgroup overlap): step j
/// issues S for key tile j + 1 and O += P V for tile j together, then
/// computes the softmax of tile j + 1 while P V runs, so the tensor cores
/// and the softmax's arithmetic overlap within the warpgroup. The loop
/// carries P (tile j's probabilities, packed) beside O, m and l; three
/// stages of K and V let tile j + 2 load during step j.
SmallVector<Value> FlashEmitter::pipelinedKeySteps(ArrayRef<Value> init) {
  StepState tile0 = unpackState(init, /*withP=*/false);
  SmallVector<Value> corrections;
  // Tile 0: its scores and probabilities (O is 0: no correction).
  Scores s0 = scores(c32(0));
  if (tma)
    mbarrierArrive(kEmpty(c32(0)));
  tile0.p = softmax(c32(0), std::move(s0), tile0.m, tile0.l, corrections);
  tile0.c = corrections;
  Value last = arith::SubIOp::create(b, loc, consumerSteps, c32(1));
  ValueRange done =
      forLoop(b, loc, c32(0), last, 1, packState(tile0),
              [&](Value step, ValueRange state) -> SmallVector<Value> {
                Value next = add(step, c32(1));
                Value nextStage = stageOf(next);
                Value stage = stageOf(step);
                if (tma) {
                  // K's tile j + 1 and V's tile j have landed.
                  mbarrierWait(kFull(nextStage), phaseOf(next));
                  mbarrierWait(vFull(stage), phaseOf(step));
                } else {
                  // Tile j + 1 is in shared memory, and every warp is done with
                  // the stage of tile j - 1 (its P V was waited for at the end
                  // of step j - 1): tile j + 2 loads there.
                  NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
                  asmBarrier("fence.proxy.async.shared::cta;");
                  syncCompute();
                  prefetch(add(step, c32(2)));
                  NVVM::CpAsyncCommitGroupOp::create(b, loc);
                }

                StepState now = unpackState(state, /*withP=*/true);
                // S for tile j + 1 first; O's rescale for tile j's max (FA3's
                // order) runs while it does, then P V. Each batch of products
                // has its own wgmma.fence, its operands fenced first: an
                // instruction writing a wgmma's input registers inside
                // another's span makes ptxas serialize them. (With 64-key steps
                // and O rescaled after P V's wait, as before, this order alone
                // was 3% slower, d128 s4k 4.37 -> 4.49 ms; with the stale max
                // it was 1-3% faster, and with 128-key steps 1-2%:
                // bench/RESULTS.md, 2026-12-01 12:52.)
                PerTile acc = issueScores(nextStage, /*fence=*/true);
                rescale(now.o, now.c);
                fenceProductOperands(now.o, now.p);
                asmBarrier("wgmma.fence.sync.aligned;");
                attend(now.o, now.p, stage, /*wait=*/false, /*fenced=*/true);
                asmBarrier("wgmma.wait_group.sync.aligned 1;");
                // With TMA, K's stage is released once S is done, V's once P V
                // is.
                if (tma)
                  mbarrierArrive(kEmpty(nextStage));
                SmallVector<Value> corrections;
                PerTile pNext =
                    softmax(next, toScores(acc), now.m, now.l, corrections);
                asmBarrier("wgmma.wait_group.sync.aligned 0;");
                if (tma)
                  mbarrierArrive(vEmpty(stage));
                now.o = fenceOperands(now.o);
                // P's words stay live until P V is done: the next P would
                // otherwise take their registers while the products still read
                // them (ptxas then serializes the products).
                for (auto &words : now.p)
                  fenceOperands(words);
                now.c = std::move(corrections);
                now.p = std::move(pNext);
                return packState(now);
              });
  // The last tile's P V.
  StepState end = unpackState(done, /*withP=*/true);
  rescale(end.o, end.c);
  if (tma)
    mbarrierWait(vFull(stageOf(last)), phaseOf(last));
  attend(end.o, end.p, stageOf(last), /*wait=*/true);
  // The steps this consumer leaves to the others (consumerSteps).
  if (ownSteps) {
    mbarrierArrive(vEmpty(stageOf(last)));
    release(add(last, c32(1)));
  }
  end.p.clear();
  end.c.clear();
  return packState(end);
}

/// O / l, written where the warp's rows lie inside the sequence (all of
/// them or none: 64-row parts).
void FlashEmitter::storeOutput(ArrayRef<Value> results) {
  std::optional<OpBuilder::InsertionGuard> storeGuard;
  if (partial) {
    auto inside = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                              add(myQ0, warpRow(0)), c32(seqQ)),
        /*withElse=*/false);
    storeGuard.emplace(b);
    b.setInsertionPointToStart(inside.thenBlock());
  }
  for (int64_t mt = 0; mt < mTiles; ++mt)
    for (int64_t h = 0; h < 2; ++h) {
      Value l = results[oCount + 2 * mTiles + 2 * mt + h];
      for (int32_t mask : {1, 2})
        l = arith::AddFOp::create(b, loc, l, shuffleXor(l, mask));
      Value inverse = arith::DivFOp::create(b, loc, cf(1.0), l);
      if (bias) {
        // Every key of the row masked with -inf (addBias).
        Value m = results[oCount + 2 * mt + h];
        Value dropped = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                              m, cf(kMaskedLog2 / 2));
        inverse = arith::SelectOp::create(
            b, loc, dropped,
            cf(zeroMaskedRows ? 0.0 : std::numeric_limits<double>::quiet_NaN()),
            inverse);
      }
      Value row = add(add(warpRow(mt), group), c32(8 * h));
      for (int64_t dt = 0; dt < oTiles; ++dt) {
        Value lo = arith::MulFOp::create(b, loc, results[oIndex(mt, dt, 2 * h)],
                                         inverse);
        Value hi = arith::MulFOp::create(
            b, loc, results[oIndex(mt, dt, 2 * h + 1)], inverse);
        Value column = add(c32(dt * 8), shl(quad, 1));
        Value offset = arith::MulIOp::create(
            b, loc,
            arith::AddIOp::create(b, loc,
                                  arith::MulIOp::create(b, loc, wide(row),
                                                        c64(oView().rowStride)),
                                  wide(column)),
            c64(2));
        LLVM::StoreOp::create(b, loc, pack(lo, hi), at(oDst, offset), 4);
      }
    }
}

} // namespace strata::attention
