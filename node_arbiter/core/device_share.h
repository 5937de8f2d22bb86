// SPDX-License-Identifier: LGPL-2.1-or-later
// Who used a shared GPU, and how much: the use-based GPU fraction and energy split. Several processes hold reservations on one device at once under MGB packing
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

// Per process, per device: its part of the device's energy, split at the readings of the
// device's own energy counter (the same counter in every process of the node, e.g. NVML's).
// Between two consecutive readings (a segment) the device's joules go to the processes in
// proportion to their weight-seconds in it; weight is 0 outside the arbiter. The weights of
// the attached processes sum to 1 at every instant, so a segment during which some process
// was attached throughout is split whole: all processes' parts add up to the device's
// joules over the union of their charged intervals, whatever the power did and however the
// processes overlapped.
struct ShareEnergy {
    double joules = 0;      // its part
    double from_j = 0;      // the counter at the start of the first segment it was charged in...
    double to_j = 0;        // ...and at the end of the last: its interval, in the counter's units
    uint32_t segments = 0;  // segments it was charged in (0: no split; from_j and to_j mean nothing)
};

// One segment of `segment_s` seconds over which the device's counter rose by `delta_j`:
// out[i] is the part of the process with weight_s[i] weight-seconds in it. The parts sum to
// delta_j when the weight-seconds fill the segment (someone attached throughout; rounding
// forgiven to 1e-9), and to delta_j x their sum / segment_s otherwise (the device's power
// taken as uniform over a segment that was partly nobody's). No allocation.
void split_segment_energy(double delta_j, double segment_s, const double *weight_s, size_t n, double *out);

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
    // The device's energy counter read at t (joules, cumulative): the segment since its last
    // reading is split among the processes (ShareEnergy). A reading below the last one (a
    // counter reset) splits nothing and starts afresh.
    void reading(double t, const std::string &device, double counter_j);

    ShareTime of(int32_t pid, const std::string &device) const;           // zeros when never seen
    ShareEnergy energy_of(int32_t pid, const std::string &device) const;  // zeros when never seen
    double device_attached_s(const std::string &device) const;            // time any process was attached
    double now() const { return now_; }

private:
    struct Holder {
        bool attached = false;
        DeviceHold hold;
        ShareTime time;
        double segment_weight_s = 0;  // since the device's last reading
        ShareEnergy energy;
    };
    struct Device {
        uint64_t capacity = 0, warp_capacity = 0;
        std::map<int32_t, Holder> holders;
        double any_attached_s = 0;
        bool has_reading = false;
        double reading_t = 0, reading_j = 0;
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

// One process's part of a device when only its own run's reading is known (no split at
// shared counter readings: a sensor that cannot tell GPUs apart, the model): the device's
// mean power over the `measured_s` seconds its joules cover, times the process's
// weight-seconds (weight 0 outside the arbiter). Alone and attached all along, that is all
// of them. At most device_joules; measured_s 0: 0 J.
double own_device_joules(double device_joules, double measured_s, const ShareTime &t);

// The mean weight while attached, in [0, 1]: the GPU fraction of this device the process is
// charged (1 for a process alone on it). attached_s 0: 0.
double mean_weight(const ShareTime &t);

}  // namespace hetpu::accounting
