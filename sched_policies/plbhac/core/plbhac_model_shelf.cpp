// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/plbhac/core/plbhac_model_shelf.h"

#include <ctime>
#include <exception>

namespace hetpu {

PlbhacModelShelf &PlbhacModelShelf::process()
{
    static PlbhacModelShelf shelf;
    return shelf;
}

PlbhacModelShelf::~PlbhacModelShelf()
{
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto &[path, e] : entries_)
        if (e.dirty)
            write(path, e);
}

std::shared_ptr<PlbhacMemory> PlbhacModelShelf::memory_for(const std::string &job_name, uint64_t elements,
                                                           const std::vector<PlannerWorker> &workers)
{
    if (job_name.empty())
        return nullptr;
    std::string key = job_name + "|" + std::to_string(elements);
    for (const auto &w : workers)
        key += "|" + std::to_string(w.id);
    std::lock_guard<std::mutex> lock(mutex_);
    auto &m = memories_[key];
    if (!m)
        m = std::make_shared<PlbhacMemory>();
    return m;
}

void PlbhacModelShelf::load(const std::string &path, const PlbhacModelKey &key, PlbhacMemory &memory, const Say &say)
{
    std::lock_guard<std::mutex> lock(mutex_);
    Entry &e = entries_[path];
    e.say = say;
    if (e.loaded)
        return;
    e.loaded = true;
    e.file.key = key;
    std::string warning;
    if (auto f = load_plbhac_models(path, key, warning)) {
        e.file.runs = f->runs;
        if (memory.pus.empty())
            memory = f->memory;
    } else if (!warning.empty() && say) {
        say(warning);
    }
}

void PlbhacModelShelf::learnt(const std::string &path, const PlbhacMemory &memory, const Say &say)
{
    std::lock_guard<std::mutex> lock(mutex_);
    Entry &e = entries_[path];
    e.say = say;
    e.file.memory = memory;
    ++e.file.runs;
    e.dirty = true;
    const double now = static_cast<double>(std::time(nullptr));
    if (e.written_unix_s == 0 || now - e.written_unix_s >= 1.0)
        write(path, e);
}

void PlbhacModelShelf::write(const std::string &path, Entry &e)
{
    e.file.saved_unix_s = static_cast<double>(std::time(nullptr));
    e.written_unix_s = e.file.saved_unix_s;
    e.dirty = false;
    try {
        save_plbhac_models(path, e.file);
    } catch (const std::exception &ex) {
        if (e.say)
            e.say(std::string("models not saved: ") + ex.what());
    }
}

}  // namespace hetpu
