// pybind11 bindings of the CPU hardware random-number instructions
// (csrc/entropy/hwrng.h): availability, and fills of a uint64 array that
// raise RuntimeError, naming the source, when the instruction is absent or a
// sample exhausted its retries (never a silent short read).
// ascend_rand/entropy/sources.py wraps them as entropy sources.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

#include "entropy/hwrng.h"
#include "python/bindings_common.h"

namespace py = pybind11;

namespace {

namespace hw = ascend_rand::entropy;

using FillFn = size_t (*)(uint64_t*, size_t, unsigned);

// Reads of at least this many samples give the GIL up: RDSEED delivers about
// 1.5 M samples/s here, so 512 samples are ~0.3 ms, well above the cost of
// releasing and retaking the GIL; smaller reads keep it.
constexpr size_t kReleaseGilSamples = 512;

uint64_t* checked_output(py::array& out, const char* name) {
  if (!py::isinstance<py::array_t<uint64_t>>(out) || out.dtype().kind() != 'u' ||
      out.itemsize() != 8)
    throw py::type_error(std::string(name) + ": out must be a uint64 array, got dtype " +
                         std::string(py::str(out.dtype())));
  if (!ascend_rand_bindings::c_contiguous_aligned(out))
    throw py::value_error(std::string(name) + ": out must be C-contiguous and aligned");
  if (!out.writeable()) throw py::value_error(std::string(name) + ": out is not writable");
  return static_cast<uint64_t*>(out.mutable_data());
}

void fill(py::array out, unsigned max_retries, const char* name, bool (*available)(),
          FillFn fn) {
  uint64_t* p = checked_output(out, name);
  if (max_retries < 1)
    throw py::value_error(std::string(name) + ": max_retries must be >= 1, got " +
                          std::to_string(max_retries));
  if (!available())
    throw std::runtime_error(std::string(name) + ": this CPU does not offer the instruction");
  const size_t n = static_cast<size_t>(out.size());
  size_t done = 0;
  if (n >= kReleaseGilSamples) {
    py::gil_scoped_release release;
    done = fn(p, n, max_retries);
  } else {
    done = fn(p, n, max_retries);
  }
  if (done != n)
    throw std::runtime_error(std::string(name) + ": no random value after " +
                             std::to_string(max_retries) + " tries (sample " +
                             std::to_string(done) + " of " + std::to_string(n) +
                             "); the hardware source is exhausted or faulty");
}

// The retry loop of hwrng.h driven by a simulated instruction that fails
// `failures` times before each success (or always, when failures < 0):
// lets the tests check that exhaustion raises rather than hangs, which real
// hardware cannot be made to do on demand.  Samples are 0, 1, 2, ...
void retry_loop_test(py::array out, unsigned max_retries, long long failures) {
  uint64_t* p = checked_output(out, "_hw_retry_loop_test");
  if (max_retries < 1) throw py::value_error("_hw_retry_loop_test: max_retries must be >= 1");
  const size_t n = static_cast<size_t>(out.size());
  long long left = failures;
  uint64_t next = 0;
  size_t pauses = 0;
  const size_t done = hw::fill_with_retries(
      p, n, max_retries,
      [&](uint64_t* v) {
        if (failures < 0 || left > 0) {
          --left;
          return false;
        }
        left = failures;
        *v = next++;
        return true;
      },
      [&] { ++pauses; });
  if (done != n)
    throw std::runtime_error("_hw_retry_loop_test: no random value after " +
                             std::to_string(max_retries) + " tries (sample " +
                             std::to_string(done) + " of " + std::to_string(n) + ", " +
                             std::to_string(pauses) + " pauses)");
}

}  // namespace

void bind_entropy(py::module_& m) {
  m.def(
      "hw_entropy_available",
      [] {
        py::dict d;
        d["arch"] = hw::hw_arch();
        d["rdseed"] = hw::rdseed_available();
        d["rdrand"] = hw::rdrand_available();
        d["rndrrs"] = hw::rndrrs_available();
        d["rdseed_retries"] = hw::kRdseedRetries;
        d["rdrand_retries"] = hw::kRdrandRetries;
        d["rndrrs_retries"] = hw::kRndrrsRetries;
        return d;
      },
      "Which CPU random-number instructions this machine offers, and the default retry "
      "budgets per 64-bit sample.");
  m.def(
      "rdseed64",
      [](py::array out, unsigned max_retries) {
        fill(std::move(out), max_retries, "rdseed", hw::rdseed_available, hw::rdseed64);
      },
      py::arg("out"), py::arg("max_retries") = hw::kRdseedRetries,
      "Fill the C-contiguous uint64 array `out` with x86 RDSEED output; RuntimeError "
      "when absent or a sample fails max_retries times.");
  m.def(
      "rdrand64",
      [](py::array out, unsigned max_retries) {
        fill(std::move(out), max_retries, "rdrand", hw::rdrand_available, hw::rdrand64);
      },
      py::arg("out"), py::arg("max_retries") = hw::kRdrandRetries,
      "Fill `out` (uint64) with x86 RDRAND output (a DRBG's output); RuntimeError when "
      "absent or a sample fails max_retries times.");
  m.def(
      "rndrrs64",
      [](py::array out, unsigned max_retries) {
        fill(std::move(out), max_retries, "rndrrs", hw::rndrrs_available, hw::rndrrs64);
      },
      py::arg("out"), py::arg("max_retries") = hw::kRndrrsRetries,
      "Fill `out` (uint64) with aarch64 RNDRRS output; RuntimeError when absent or a "
      "sample fails max_retries times.");
  m.def("_hw_retry_loop_test", &retry_loop_test, py::arg("out"), py::arg("max_retries"),
        py::arg("failures"),
        "Test hook: the hardware retry loop with a simulated instruction that fails "
        "`failures` times before each success (always when negative).");
}
