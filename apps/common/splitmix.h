// SPDX-License-Identifier: LGPL-2.1-or-later
// splitmix64: a tiny generator whose whole state is one 64-bit word (so a checkpoint can
// save it) and whose sequence is the same on every platform, unlike the standard
// library's distributions.
#pragma once

#include <cmath>
#include <cstdint>

namespace hetpu::apps {

struct SplitMix64 {
    uint64_t state = 0;
    // The generator seeded with `seed` after `position` draws: each draw adds a constant to
    // the state, so any element of a stream is reached at once (a rank generates only the
    // part of an input it holds, identical to the whole stream's).
    static SplitMix64 at(uint64_t seed, uint64_t position)
    {
        return SplitMix64{seed + position * 0x9e3779b97f4a7c15ull};
    }
    uint64_t next()
    {
        uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    // Uniform in [0, 1), 53 random bits.
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
    // Uniform in [-1, 1), on the same 53-bit grid (doubling is exact).
    double symmetric() { return uniform() * 2.0 - 1.0; }
    // Uniform in [0, bound), bound > 0 (modulo bias irrelevant at these sizes).
    uint64_t below(uint64_t bound) { return next() % bound; }
    // Standard normal (Box-Muller; one of the pair is dropped to keep the state one word).
    double normal()
    {
        double u1 = uniform();
        while (u1 <= 0)
            u1 = uniform();
        const double u2 = uniform();
        return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    }
    // Advances the state exactly as normal() does, without computing the value (a rank
    // generating only its share of a stream of normals skips the others cheaply).
    void skip_normal()
    {
        while (uniform() <= 0) {
        }
        next();
    }
};

}  // namespace hetpu::apps
