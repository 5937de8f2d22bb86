// SPDX-License-Identifier: LGPL-2.1-or-later
// Rounding PLB-HAC's continuous block sizes to whole granules without losing or inventing
// work: Ipopt returns real-valued shares, StarPU needs integer blocks that are multiples of
// the application's granule (a matrix row, a gene, ...), and the blocks of one step must
// still add up to the step's workload exactly.
#pragma once

#include <cstdint>
#include <vector>

namespace hetpu {

// Largest-remainder (Hamilton) rounding of `shares` (>= 0, in elements, summing to about W)
// to blocks that are multiples of `granule`, summing to exactly W:
//   - each share is scaled so the shares sum to W/granule granules, and floored;
//   - the granules still missing go, one each, to the shares with the largest fractional
//     parts (ties: larger share first, then lower index), so no block moves by more than one
//     granule from its continuous value;
//   - when granule does not divide W, the tail W mod granule (less than one granule) is
//     added to the largest block: the data simply ends there, and the largest block is the
//     one whose finish time that sliver changes least in relative terms.
// A share of exactly 0 (a PU left out) always stays 0. If every share is 0 the whole of W
// goes to index 0 (callers never ask for that; it keeps the sum invariant anyway).
// Throws std::invalid_argument if granule < 1, W < 0, shares is empty, or a share is
// negative or not finite.
std::vector<std::int64_t> round_to_granule(const std::vector<double> &shares, std::int64_t W, std::int64_t granule);

}  // namespace hetpu
