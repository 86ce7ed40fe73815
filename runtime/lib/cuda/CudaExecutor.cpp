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

std::vector<double> cudaTimeRuns(Session &session, int runs) {
  if (!session.cuda_)
    throw Error("strata module '" + session.module().name() + "' targets '" +
                session.module().target() +
                "', not 'cuda': its session has no device runs to time");
  if (!session.ran_)
    throw Error("strata module '" + session.module().name() +
                "': timing its device runs needs a run first (its inputs "
                "are then on the device)");
  return session.cuda_->timeRuns(runs);
}

} // namespace strata::rt
