// SPDX-License-Identifier: LGPL-2.1-or-later
#include "perfmodels/energy/counter_accumulator.h"

namespace hetpu::energy {

std::uint64_t CounterAccumulator::feed(std::uint64_t raw)
{
    if (!started_) {
        started_ = true;
        last_ = raw;
        return total_;
    }
    if (raw >= last_)
        total_ += raw - last_;
    else if (range_ > last_)
        total_ += (range_ - last_) + raw;
    else
        // A counter without a known range went backwards: a reset, not a wrap. Count from the
        // new value rather than inventing energy.
        total_ += raw;
    last_ = raw;
    return total_;
}

}  // namespace hetpu::energy
