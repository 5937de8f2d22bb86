// SPDX-License-Identifier: LGPL-2.1-or-later
// The durable record of every charged run: an SQLite file shared by all jobs of a user (or
// a site). Several jobs finish at once and jobs get killed, so:
//   - WAL journal + a busy timeout: concurrent writers queue instead of failing;
//   - one BEGIN IMMEDIATE transaction per job (job row + its worker-type rows): a job killed
//     at any instant leaves either all of its rows or none;
//   - PRAGMA user_version carries the schema version; a newer ledger is refused, not mangled.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "accounting_hook/core/job_record.h"

struct sqlite3;

namespace hetpu::accounting {

class LedgerError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// 2: jobs.gpu_share and jobs.fg_allocated, table job_devices. 3: jobs.started_at,
// job_devices.device_from_j and device_to_j. An older ledger is migrated by the first writer
// and read as it is by readers.
constexpr int ledger_schema_version = 3;

// $HETPU_LEDGER, else $HETPU_HOME/ledger.sqlite, else $XDG_DATA_HOME/hetpu/ledger.sqlite,
// else $HOME/.local/share/hetpu/ledger.sqlite.
std::string default_ledger_path(const std::function<const char *(const char *)> &env);

// Per device shared through the MGB arbiter (hetpu su report --by device).
struct DeviceTotals {
    std::string device;
    long long jobs = 0, shared_jobs = 0;  // shared: another process held it at the same time
    double share_h = 0, used_share_h = 0, energy_j = 0;
    double su = 0;  // each job's SU split among its devices by share-hours
};

struct LedgerTotals {
    std::string key;  // the user, partition or app
    long long jobs = 0;
    double su = 0, energy_j = 0, gco2e = 0, wall_s = 0;
};

class Ledger {
public:
    // Opens (creating the file, its directory and the schema if needed). Throws LedgerError
    // saying what is wrong and what to do: unwritable place, not a database, newer schema.
    // read_only: never creates or modifies (for reports).
    explicit Ledger(const std::string &path, bool read_only = false);
    ~Ledger();
    Ledger(const Ledger &) = delete;
    Ledger &operator=(const Ledger &) = delete;

    // Stores the job and its worker rows in one transaction; returns the job id.
    long long record(JobRecord job);

    // Jobs that started at or after `since` (ISO date or date-time, "" = all), oldest first,
    // with their worker rows.
    std::vector<JobRecord> jobs(const std::string &since = "") const;
    // Totals grouped by "user", "partition" or "app" (largest SU first).
    std::vector<LedgerTotals> totals(const std::string &by, const std::string &since = "") const;
    std::vector<DeviceTotals> device_totals(const std::string &since = "") const;
    int schema_version() const { return version_; }
    // PRAGMA integrity_check's answer ("ok" when sound).
    std::string integrity_check() const;

    const std::string &path() const { return path_; }

private:
    void exec(const char *sql) const;
    bool open_schema(bool read_only);
    [[noreturn]] void fail(const std::string &what) const;
    void migrate();
    // Runs `body` in a BEGIN IMMEDIATE transaction: committed if it returns, rolled back
    // (and the exception passed on) if it throws.
    void immediate_transaction(const std::function<void()> &body);
    std::string path_;
    sqlite3 *db_ = nullptr;
    int version_ = 0;
};

// "2026-11-21" or "2026-11-21T10:00" / "2026-11-21 10:00:00" -> the ledger's comparable
// form; throws LedgerError naming the expected format otherwise.
std::string normalise_since(const std::string &since);

// Now, UTC, ISO 8601 with a Z.
std::string utc_now_iso();

}  // namespace hetpu::accounting
