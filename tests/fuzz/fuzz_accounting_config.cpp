// SPDX-License-Identifier: LGPL-2.1-or-later
// libFuzzer harness: the accounting hook's partition config (TOML), its benchmarks CSV and
// Slurm's TRESBillingWeights. ConfigError and std::invalid_argument are their documented errors.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "accounting_hook/core/benchmark_csv.h"
#include "accounting_hook/core/partition_config.h"
#include "accounting_hook/core/slurm_billing.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const std::string text(reinterpret_cast<const char *>(data), size);
    try {
        hetpu::accounting::parse_accounting_config(text, "fuzz.toml");
    } catch (const hetpu::accounting::ConfigError &) {
    }
    try {
        hetpu::accounting::parse_benchmarks(text, "fuzz.csv");
    } catch (const std::invalid_argument &) {
    }
    try {
        hetpu::accounting::parse_tres_billing_weights(text);
    } catch (const std::invalid_argument &) {
    }
    return 0;
}
