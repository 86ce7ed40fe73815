//===- CudaExecutor.cpp - What every build has of the CUDA side -*- C++ -*-===//
//
// The parts of the CUDA executor's interface that do not depend on whether
// it is built: the interface's destructor and cudaSessionInfo, which reads
// the Session's executor (it is the Session's friend).
//
//===----------------------------------------------------------------------===//

#include "CudaExecutor.h"

namespace strata::rt {

detail::CudaExecutor::~CudaExecutor() = default;

CudaSessionInfo cudaSessionInfo(const Session &session) {
  if (!session.cuda_)
    throw Error("strata module '" + session.module().name() + "' targets '" +
                session.module().target() +
                "', not 'cuda': its session has no CUDA side");
  return session.cuda_->info();
}

} // namespace strata::rt
