// Exceptions thrown by granula. Every error is one of these, derived from the standard
// exception that fits, so callers may catch either the granula type or the standard one.
#pragma once

#include <memory>
#include <new>
#include <stdexcept>
#include <string>

namespace granula {

// A caller passed something the operation does not accept (bad size, type, option, shape).
class invalid_argument : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

// A file could not be read or written; the message names the file and the reason.
class io_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A CUDA runtime call or kernel launch failed, or no CUDA device is available.
class cuda_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Host memory ran out; the message says how much was asked for. A std::bad_alloc, so that
// Python sees MemoryError.
class out_of_memory : public std::bad_alloc {
public:
    explicit out_of_memory(const std::string& what) : what_(std::make_shared<const std::string>(what)) {}
    const char* what() const noexcept override { return what_->c_str(); }

private:
    std::shared_ptr<const std::string> what_;  // shared: copying an exception must not throw
};

// The request is valid but this build or backend does not support it.
class unsupported : public std::logic_error {
public:
    using std::logic_error::logic_error;
};

}  // namespace granula
