// The device table. Only the CPU is built in; the CUDA backend module is a later issue, and
// until it exists every CUDA request says so instead of failing obscurely.
#include "backend.hpp"

namespace tide {

const DeviceBackend& backend_for(DeviceType type) {
  TIDE_CHECK(type == DeviceType::CPU, "cuda: tide was built without the CUDA backend "
             "(no CUDA module is available), so CUDA devices cannot be used");
  TIDE_FAIL("internal error: the CPU has no device backend entry");
}

bool cuda_available() { return false; }
int cuda_device_count() { return 0; }

}  // namespace tide
