// The named target (or "host") a codegen test compiles for; a test failure,
// not an abort, when the name is unknown.
#ifndef KF_TEST_UNIT_CODEGEN_TESTTARGET_H
#define KF_TEST_UNIT_CODEGEN_TESTTARGET_H

#include "kf/Target/TargetInfo.h"

#include "gtest/gtest.h"

namespace kf::codegen {

inline target::TargetInfo testTarget(llvm::StringRef name) {
  llvm::Expected<target::TargetInfo> t = target::lookupTarget(name);
  EXPECT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  return t ? *t : target::TargetInfo();
}

} // namespace kf::codegen

#endif // KF_TEST_UNIT_CODEGEN_TESTTARGET_H
