#include "tools/calibrate/calibrate_options.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace hetpu::calibrate {

namespace {

bool to_u64(const std::string &t, uint64_t &out)
{
    if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos)
        return false;
    errno = 0;
    char *end = nullptr;
    const unsigned long long v = std::strtoull(t.c_str(), &end, 10);
    if (errno || *end)
        return false;
    out = v;
    return true;
}

bool to_double(const char *t, double &out)
{
    if (!t || !*t)
        return false;
    errno = 0;
    char *end = nullptr;
    out = std::strtod(t, &end);
    return !errno && !*end && std::isfinite(out);
}

}  // namespace

uint64_t default_dim(const std::string &app) { return app == "fft2d" ? 1024 : 512; }

std::string parse_sizes(const std::string &text, std::vector<uint64_t> &out)
{
    out.clear();
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        const std::size_t c1 = item.find(':');
        if (c1 == std::string::npos) {
            uint64_t v = 0;
            if (!to_u64(item, v) || v == 0)
                return "size '" + item + "' is not a positive integer";
            out.push_back(v);
            continue;
        }
        const std::size_t c2 = item.find(':', c1 + 1);
        uint64_t from = 0, to = 0, step = 0;
        if (c2 == std::string::npos || !to_u64(item.substr(0, c1), from) ||
            !to_u64(item.substr(c1 + 1, c2 - c1 - 1), to) || !to_u64(item.substr(c2 + 1), step) || from == 0 ||
            step == 0 || to < from)
            return "size range '" + item + "' is not FROM:TO:STEP with 0 < FROM <= TO and STEP > 0";
        if ((to - from) / step >= 10000)
            return "size range '" + item + "' has more than 10000 sizes";
        for (uint64_t v = from; v <= to; v += step)
            out.push_back(v);
    }
    if (out.empty())
        return "no sizes given";
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return "";
}

std::string parse_options(int argc, const char *const *argv, Options &o)
{
    bool have_sizes = false;
    for (int i = 0; i < argc; ++i) {
        const std::string opt = argv[i];
        if (opt == "-h" || opt == "--help") {
            o.help = true;
            return "";
        }
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        static const char *known[] = {"--app", "--sizes", "--dim", "--precision", "--min-reps", "--max-reps",
                                      "--max-time", "--output", "--cpu-tdp", "--cores-per-socket", "--gpu-tdp"};
        if (std::find_if(std::begin(known), std::end(known), [&](const char *k) { return opt == k; }) ==
            std::end(known))
            return "unknown option '" + opt + "'";
        if (!v)
            return opt + " needs a value";
        ++i;
        uint64_t u = 0;
        double d = 0;
        if (opt == "--app") {
            o.app = v;
            if (o.app != "matmul" && o.app != "fft2d")
                return "--app '" + o.app + "' is not an app calibrate knows (matmul, fft2d)";
        } else if (opt == "--sizes") {
            if (std::string e = parse_sizes(v, o.sizes); !e.empty())
                return "--sizes: " + e + " (e.g. --sizes 64:1024:64)";
            have_sizes = true;
        } else if (opt == "--dim") {
            if (!to_u64(v, u) || u == 0 || u > 65536)
                return "--dim needs an integer in [1, 65536]";
            o.dim = u;
        } else if (opt == "--precision") {
            if (!to_double(v, d) || !(d > 0) || d >= 1)
                return "--precision needs a fraction in (0, 1), e.g. 0.1 for 10%";
            o.rule.precision = d;
        } else if (opt == "--min-reps") {
            if (!to_u64(v, u) || u < 2 || u > 100000)
                return "--min-reps needs an integer >= 2 (a confidence interval needs two samples)";
            o.rule.min_reps = static_cast<unsigned>(u);
        } else if (opt == "--max-reps") {
            if (!to_u64(v, u) || u < 2 || u > 100000)
                return "--max-reps needs an integer in [2, 100000]";
            o.rule.max_reps = static_cast<unsigned>(u);
        } else if (opt == "--max-time") {
            if (!to_double(v, d) || !(d > 0))
                return "--max-time needs a positive number of seconds";
            o.max_seconds = d;
        } else if (opt == "--output") {
            o.output = v;
        } else if (opt == "--cpu-tdp") {
            if (!to_double(v, d) || !(d > 0))
                return "--cpu-tdp needs a positive number of watts";
            o.cpu_tdp_w = d;
        } else if (opt == "--cores-per-socket") {
            if (!to_u64(v, u) || u == 0 || u > 4096)
                return "--cores-per-socket needs a positive integer";
            o.cores_per_socket = static_cast<int>(u);
        } else {  // --gpu-tdp
            if (!to_double(v, d) || !(d > 0))
                return "--gpu-tdp needs a positive number of watts";
            o.gpu_tdp_w = d;
        }
    }
    if (o.app.empty())
        return "--app matmul|fft2d is required";
    if (!have_sizes)
        return "--sizes is required (e.g. --sizes 64:1024:64)";
    if (o.rule.min_reps > o.rule.max_reps)
        return "--min-reps " + std::to_string(o.rule.min_reps) + " is larger than --max-reps " +
               std::to_string(o.rule.max_reps);
    if (o.dim == 0)
        o.dim = default_dim(o.app);
    return "";
}

std::string usage()
{
    return "usage: hetpu calibrate --app matmul|fft2d --sizes LIST [--dim D] [--precision 0.1]\n"
           "                       [--min-reps 3] [--max-reps 30] [--max-time 60] [--output FILE.csv]\n"
           "                       [--cpu-tdp 100] [--cores-per-socket N] [--gpu-tdp 250]\n"
           "Measures, on every StarPU worker at once (the paper's concurrent abstract processors, so\n"
           "contention is included), the execution time and dynamic energy of one block of each\n"
           "size, repeating until both sample means lie within a 95% Student-t interval of the\n"
           "requested precision. Writes the profile CSV `hetpu pareto` and the hepopta/htpopta\n"
           "policies read (default $HETPU_HOME/profiles/<app>.csv), one row per (processor, size)\n"
           "with the energy source of each point.\n"
           "  --sizes   elements per processor: 64,128 or FROM:TO:STEP (matmul: columns of B and C;\n"
           "            fft2d: rows)\n"
           "  --dim     matmul: m = k (default 512); fft2d: row length N (default 1024)\n"
           "  --cpu-tdp, --cores-per-socket, --gpu-tdp: the model source's figures, used where no\n"
           "            sensor (RAPL, NVML) exists; HETPU_ENERGY=rapl|nvml|model|auto chooses\n"
           "STARPU_SCHED is ignored: calibration runs under its own placement (one block per worker).\n";
}

}  // namespace hetpu::calibrate
