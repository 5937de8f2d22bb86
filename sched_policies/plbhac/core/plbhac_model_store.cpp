// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/plbhac/core/plbhac_model_store.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fcntl.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace hetpu {

namespace {

// What is wrong with a well-formed file, said as is; anything else thrown while reading one
// is prefixed "unreadable models file".
class NotAModelsFile : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

constexpr const char *kFormat = "hetpu-plbhac-models";

bool valid_job_file_name(const std::string &job)
{
    if (job.empty() || job[0] == '.')
        return false;
    return std::all_of(job.begin(), job.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
    });
}

// FNV-1a, 64 bits: a stable name for a key (std::hash may differ between builds, and the
// file must be found again by the next build of the program).
uint64_t fnv1a(const std::string &s, uint64_t h = 1469598103934665603ull)
{
    for (unsigned char c : s) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

nlohmann::json points_json(const std::vector<std::pair<double, double>> &points)
{
    nlohmann::json a = nlohmann::json::array();
    for (const auto &[x, s] : points)
        a.push_back({x, s});
    return a;
}

std::vector<std::pair<double, double>> points_from(const nlohmann::json &a, const char *what)
{
    if (!a.is_array())
        throw std::runtime_error(std::string(what) + " must be an array of [elements, seconds]");
    std::vector<std::pair<double, double>> out;
    for (const auto &p : a) {
        if (!p.is_array() || p.size() != 2 || !p[0].is_number() || !p[1].is_number())
            throw std::runtime_error(std::string(what) + " must be an array of [elements, seconds]");
        out.emplace_back(p[0].get<double>(), p[1].get<double>());
    }
    return out;
}

std::string read_file(const std::string &path, bool &missing)
{
    std::ifstream in(path, std::ios::binary);
    missing = !in;
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
}

}  // namespace

PlbhacModelKey plbhac_model_key(const std::string &job, uint64_t elements, const std::string &host,
                                const std::vector<PlannerWorker> &workers)
{
    PlbhacModelKey k{job, elements, host, {}};
    for (const auto &w : workers) {
        // StarPU's worker names end with device details in parentheses, and PoCL's include
        // the memory it reports, which follows the host's free RAM: "OpenCL 0
        // (pthread-... 18.8 GiB)". Keyed on the full name, every run of the real test node
        // wrote a new file and none was ever read again. The id and kind identify a worker
        // of a configuration; the name before " (" says which it is to a reader.
        const std::string name = w.name.substr(0, w.name.find(" ("));
        k.workers.push_back(std::to_string(w.id) + " " + name + " " + worker_kind_name(w.kind));
    }
    return k;
}

std::string plbhac_models_dir(const std::string &home) { return home.empty() ? "" : home + "/plbhac-models"; }

std::string plbhac_model_path(const std::string &home, const PlbhacModelKey &key)
{
    if (home.empty() || !valid_job_file_name(key.job))
        return "";
    uint64_t h = fnv1a(key.job);
    h = fnv1a("\n" + std::to_string(key.elements), h);
    h = fnv1a("\n" + key.host, h);
    for (const auto &w : key.workers)
        h = fnv1a("\n" + w, h);
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    return plbhac_models_dir(home) + "/" + key.job + "." + hex + ".json";
}

std::string plbhac_models_to_json(const PlbhacModelFile &file)
{
    nlohmann::json j;
    j["format"] = kFormat;
    j["version"] = kPlbhacModelsVersion;
    j["job"] = file.key.job;
    j["elements"] = file.key.elements;
    j["host"] = file.key.host;
    j["workers"] = file.key.workers;
    j["runs"] = file.runs;
    j["saved_unix_s"] = file.saved_unix_s;
    j["pus"] = nlohmann::json::array();
    for (const auto &pu : file.memory.pus) {
        std::vector<std::string> terms;
        for (BasisFn f : pu.exec.terms())
            terms.push_back(basis_name(f));
        j["pus"].push_back({{"worker", pu.worker},
                            {"exec", points_json(pu.exec.points())},
                            {"exec_terms", terms},
                            {"exec_held", points_json(pu.exec.held_points())},
                            {"transfer", points_json(pu.transfer.points())},
                            {"size_lo", pu.size_lo},
                            {"size_hi", pu.size_hi},
                            {"latency", pu.latency},
                            {"home", pu.home},
                            {"misses", pu.misses}});
    }
    return j.dump(1) + "\n";
}

PlbhacModelFile plbhac_models_from_json(const std::string &text)
{
    try {
        const nlohmann::json j = nlohmann::json::parse(text);
        if (!j.is_object() || j.value("format", std::string()) != kFormat)
            throw NotAModelsFile(std::string("not a hetpu PLB-HAC models file (no \"format\": \"") + kFormat + "\")");
        if (!j.contains("version") || !j["version"].is_number_integer() ||
            j["version"].get<int>() != kPlbhacModelsVersion)
            throw NotAModelsFile("models file version " +
                                 (j.contains("version") ? j["version"].dump() : std::string("(none)")) +
                                 ", this hetpu reads version " + std::to_string(kPlbhacModelsVersion));
        PlbhacModelFile f;
        f.key.job = j.at("job").get<std::string>();
        f.key.elements = j.value("elements", uint64_t{0});
        f.key.host = j.at("host").get<std::string>();
        f.key.workers = j.at("workers").get<std::vector<std::string>>();
        f.runs = j.value("runs", 0u);
        f.saved_unix_s = j.value("saved_unix_s", 0.0);
        for (const auto &p : j.at("pus")) {
            PlbhacPuMemory m;
            m.worker = p.at("worker").get<int>();
            // Optional: the curve's basis functions, so that loading refits the saved curve
            // instead of choosing one again (files written before it have none).
            std::vector<BasisFn> terms;
            if (p.contains("exec_terms"))
                for (const auto &name : p.at("exec_terms").get<std::vector<std::string>>()) {
                    const std::optional<BasisFn> f = basis_from_name(name);
                    if (!f)
                        throw NotAModelsFile("exec_terms of worker " + std::to_string(m.worker) + ": '" + name +
                                             "' is not a basis function of this hetpu (1, u, u^2, u^3, exp(u), ln(u), "
                                             "u*exp(u), u*ln(u))");
                    terms.push_back(*f);
                }
            try {
                m.exec.restore(points_from(p.at("exec"), "exec"), terms);
                // Optional: surprises still waiting for the block that tells a spike from a
                // change; replayed, so the next one decides as it would have in that run.
                if (p.contains("exec_held"))
                    for (const auto &[x, seconds] : points_from(p.at("exec_held"), "exec_held"))
                        m.exec.add(x, seconds);
                m.transfer.restore(points_from(p.at("transfer"), "transfer"));
            } catch (const std::invalid_argument &e) {
                throw NotAModelsFile(e.what());
            }
            m.size_lo = p.at("size_lo").get<double>();
            m.size_hi = p.at("size_hi").get<double>();
            if (!(m.size_lo >= 0 && m.size_hi >= m.size_lo))
                throw NotAModelsFile("size_lo/size_hi of worker " + std::to_string(m.worker) + " are not a range");
            // Optional: files written before them have none (their PUs start with no latency
            // and no delay home).
            for (const auto &[name, samples] : {std::pair{"latency", &m.latency}, std::pair{"home", &m.home}})
                if (p.contains(name)) {
                    *samples = p.at(name).get<std::vector<double>>();
                    for (double s : *samples)
                        if (!std::isfinite(s) || s < 0)
                            throw NotAModelsFile(std::string(name) + " of worker " + std::to_string(m.worker) +
                                                 " holds a value that is not a number of seconds >= 0");
                }
            // Optional too: files written before them have none (the straggle hedge then waits
            // for this run's misses).
            if (p.contains("misses")) {
                m.misses = p.at("misses").get<std::vector<double>>();
                for (double v : m.misses)
                    if (!std::isfinite(v))
                        throw NotAModelsFile("misses of worker " + std::to_string(m.worker) +
                                             " holds a value that is not a finite log-ratio");
            }
            f.memory.pus.push_back(std::move(m));
        }
        return f;
    } catch (const NotAModelsFile &) {
        throw;
    } catch (const std::exception &e) {
        throw std::runtime_error(std::string("unreadable models file: ") + e.what());
    }
}

void save_plbhac_models(const std::string &path, const PlbhacModelFile &file)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path target(path);
    fs::create_directories(target.parent_path(), ec);
    if (ec)
        throw std::runtime_error("cannot create " + target.parent_path().string() + ": " + ec.message());
    // Unique per process and per call, in the target's directory (rename is atomic only
    // within one file system).
    static std::atomic<unsigned> counter{0};
    const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
    const std::string text = plbhac_models_to_json(file);
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            const std::string why = std::strerror(errno);
            ::close(fd);
            ::unlink(tmp.c_str());
            throw std::runtime_error("cannot write " + tmp + ": " + why);
        }
        done += static_cast<size_t>(n);
    }
    // fsync before rename: otherwise a crash can leave the new name pointing at an empty
    // file on some file systems (ext4 without auto_da_alloc, xfs).
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        const std::string why = std::strerror(errno);
        ::unlink(tmp.c_str());
        throw std::runtime_error("cannot write " + tmp + ": " + why);
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        ::unlink(tmp.c_str());
        throw std::runtime_error("cannot rename " + tmp + " to " + path + ": " + why);
    }
}

std::optional<PlbhacModelFile> load_plbhac_models(const std::string &path, const PlbhacModelKey &key,
                                                  std::string &warning)
{
    warning.clear();
    bool missing = false;
    const std::string text = read_file(path, missing);
    if (missing)
        return std::nullopt;
    PlbhacModelFile f;
    try {
        f = plbhac_models_from_json(text);
    } catch (const std::runtime_error &e) {
        warning = path + ": " + e.what() + "; ignored (the run trains and rewrites it)";
        return std::nullopt;
    }
    if (!(f.key == key)) {
        warning = path + ": holds job '" + f.key.job + "' of " + std::to_string(f.key.elements) +
                  " elements on host '" + f.key.host +
                  "' with another size, worker set or host than this run; ignored (the run trains and rewrites it)";
        return std::nullopt;
    }
    return f;
}

std::vector<PlbhacModelEntry> list_plbhac_models(const std::string &home)
{
    namespace fs = std::filesystem;
    std::vector<PlbhacModelEntry> out;
    std::error_code ec;
    const std::string dir = plbhac_models_dir(home);
    if (dir.empty() || !fs::is_directory(dir, ec))
        return out;
    for (const auto &e : fs::directory_iterator(dir, ec)) {
        if (!e.is_regular_file(ec) || e.path().extension() != ".json")
            continue;
        PlbhacModelEntry entry;
        entry.path = e.path().string();
        bool missing = false;
        try {
            entry.file = plbhac_models_from_json(read_file(entry.path, missing));
        } catch (const std::runtime_error &e) {
            entry.error = e.what();  // listed with the others: one bad file must not hide the rest
        }
        out.push_back(std::move(entry));
    }
    std::sort(out.begin(), out.end(), [](const auto &a, const auto &b) { return a.path < b.path; });
    return out;
}

}  // namespace hetpu
