#include "granula/core/device.hpp"

#include <string>

#include "granula/core/error.hpp"

namespace granula {

std::string_view to_string(device d) {
    switch (d) {
    case device::automatic: return "auto";
    case device::cpu: return "cpu";
    case device::cuda: return "cuda";
    }
    return "?";
}

device parse_device(std::string_view name) {
    if (name == "auto") return device::automatic;
    if (name == "cpu") return device::cpu;
    if (name == "cuda") return device::cuda;
    throw invalid_argument("unknown device '" + std::string(name) + "'; allowed: auto, cpu, cuda");
}

bool cuda_available() { return cuda_device_count() > 0; }

device resolve_device(device requested) {
    if (requested == device::automatic) return cuda_available() ? device::cuda : device::cpu;
    if (requested == device::cuda && !cuda_available()) {
        if (!cuda_built()) throw unsupported("CUDA was asked for, but this granula build has no CUDA backend");
        throw cuda_error("CUDA was asked for, but no CUDA device is available");
    }
    return requested;
}

}  // namespace granula
