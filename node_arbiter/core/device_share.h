// SPDX-License-Identifier: LGPL-2.1-or-later
// Who used a shared GPU, and how much: the use-based GPU fraction and energy split of
// shared devices. Several processes hold reservations on one device at once under MGB packing
// (C. Chen, C. Porter, S. Pande, "Effective GPU Sharing Under Compiler Guidance"); the
// accounting model (C. Di Pietrantonio, C. Harris, M. Cytowski, "Energy-based Accounting
// Model for Heterogeneous Supercomputers") charges max(fc, fg, fm) of a node, which assumes
// a process owns its devices. Here fg becomes the part of a device a process used.
//
// At any instant, the share of a process on a device is the larger of its reserved memory /
// the device's capacity and its in-use warps / the device's warp capacity: the model's own
// max() rule applied inside one GPU. Its weight is what it is charged for at that instant:
//   - shares summing to 1 or more (warps may be oversubscribed): weight = share / sum;
//   - shares summing to less: weight = share + the idle remainder (1 - sum) split among
//     the holders in proportion to their reserved memory (to their shares when none holds
//     memory);
//   - nobody holds anything: the idle device is split evenly among the processes attached
//     to it (those that reported it to the arbiter).
// The weights of the attached processes therefore sum to exactly 1 whenever any process is
// attached, and are 0 otherwise: integrated over time, all processes' share-hours of a device
// never exceed its device-hours, and a process alone on its device is charged all of it
// (today's charge). Pure C++, no StarPU, no allocation in the per-instant function (the
// arbiter calls it under its lock).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace hetpu::accounting {

// What one process holds on one device at an instant.
struct DeviceHold {
    int32_t pid = 0;
    uint64_t bytes = 0;  // reserved memory
    uint64_t warps = 0;  // in-use warps
};

struct HoldWeight {
    double share = 0;   // max(bytes / capacity, warps / warp capacity), at most 1
    double weight = 0;  // what the process is charged for at this instant (see above)
};

// out[i] for holds[i]. capacity or warp_capacity 0: that term counts as 0. n == 0: nothing.
void device_weights(uint64_t capacity, uint64_t warp_capacity, const DeviceHold *holds, size_t n, HoldWeight *out);

// Per process, per device: the three time integrals (seconds).
struct ShareTime {
    double attached_s = 0;  // while it was attached to the device
    double share_s = 0;     // integral of its share (what it used)
    double weight_s = 0;    // integral of its weight (what it is charged: share + its part of idle)
};

// Integrates the weights over a log of grants and releases (times in seconds, non-decreasing).
// The state between two events is what the events before say; nothing is sampled. A process
// dying is a detach at the moment its death is noticed (the arbiter's reclaim): its grants
// count until then.
class ShareIntegrator {
public:
    // A device with its capacities. Throws std::invalid_argument for an empty key or
    // capacity 0.
    void add_device(const std::string &key, uint64_t capacity, uint64_t warp_capacity);

    // Each advances the clock to t first. Throws std::invalid_argument naming the problem
    // for an unknown device, time going backwards, a release of more than is held, or a
    // grant by a process not attached to the device.
    void attach(double t, int32_t pid, const std::string &device);
    void detach(double t, int32_t pid, const std::string &device);  // releases what it still held
    void grant(double t, int32_t pid, const std::string &device, uint64_t bytes, uint64_t warps);
    void release(double t, int32_t pid, const std::string &device, uint64_t bytes, uint64_t warps);
    void advance(double t);

    ShareTime of(int32_t pid, const std::string &device) const;  // zeros when never seen
    double device_attached_s(const std::string &device) const;   // time any process was attached
    double now() const { return now_; }

private:
    struct Holder {
        bool attached = false;
        DeviceHold hold;
        ShareTime time;
    };
    struct Device {
        uint64_t capacity = 0, warp_capacity = 0;
        std::map<int32_t, Holder> holders;
        double any_attached_s = 0;
    };
    Device &device(const std::string &key);
    Holder &attached_holder(const std::string &key, int32_t pid);
    std::map<std::string, Device> devices_;
    double now_ = 0;
    bool started_ = false;
};

// A device's joules split in proportion to weights (share-seconds): the parts add up to
// `joules` (to rounding). All weights 0: split evenly. Throws std::invalid_argument for a
// negative or non-finite weight or joules, or no weights.
std::vector<double> split_energy(double joules, const std::vector<double> &weight_s);

// One process's view of a device it shared over its own run: the device's joules measured
// over the run times the process's mean weight while attached (its weight_s / attached_s).
// Alone on the device, that is all of them. attached_s 0: 0 J.
double own_device_joules(double device_joules, const ShareTime &t);

// The mean weight while attached, in [0, 1]: the GPU fraction of this device the process is
// charged (1 for a process alone on it). attached_s 0: 0.
double mean_weight(const ShareTime &t);

}  // namespace hetpu::accounting
