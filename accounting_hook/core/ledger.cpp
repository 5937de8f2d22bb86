// SPDX-License-Identifier: LGPL-2.1-or-later
#include "accounting_hook/core/ledger.h"

#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <system_error>
#include <thread>
#include <utility>

#include <unistd.h>

namespace hetpu::accounting {

namespace {

constexpr int busy_timeout_ms = 30000;  // a job finishing behind many others waits, never fails

const char *schema_sql =
    "CREATE TABLE IF NOT EXISTS jobs ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " recorded_at TEXT NOT NULL, user TEXT NOT NULL, host TEXT NOT NULL, app TEXT NOT NULL,"
    " policy TEXT NOT NULL, partition TEXT NOT NULL, fraction_source TEXT NOT NULL, slurm_job_id TEXT NOT NULL,"
    " nodes INTEGER NOT NULL, cores REAL NOT NULL, gpus REAL NOT NULL, mem_gib REAL NOT NULL,"
    " fc REAL NOT NULL, fg REAL NOT NULL, fm REAL NOT NULL, weight REAL NOT NULL,"
    " wall_s REAL NOT NULL, su REAL NOT NULL, energy_j REAL NOT NULL, energy_source TEXT NOT NULL,"
    " gco2e REAL, worker_rows INTEGER NOT NULL,"
    " gpu_share TEXT NOT NULL DEFAULT 'allocation', fg_allocated REAL, started_at TEXT);"
    "CREATE TABLE IF NOT EXISTS job_workers ("
    " job_id INTEGER NOT NULL REFERENCES jobs(id), worker_type TEXT NOT NULL, workers INTEGER NOT NULL,"
    " tasks INTEGER NOT NULL, busy_s REAL NOT NULL, energy_j REAL NOT NULL, energy_source TEXT NOT NULL,"
    " model_energy_j REAL NOT NULL, PRIMARY KEY (job_id, worker_type));"
    "CREATE INDEX IF NOT EXISTS jobs_recorded_at ON jobs(recorded_at);"
    "CREATE INDEX IF NOT EXISTS jobs_started_at ON jobs(started_at);"
    "CREATE TABLE IF NOT EXISTS job_devices ("
    " job_id INTEGER NOT NULL REFERENCES jobs(id), device TEXT NOT NULL, peers INTEGER NOT NULL,"
    " attached_h REAL NOT NULL, used_share_h REAL NOT NULL, share_h REAL NOT NULL, fraction REAL NOT NULL,"
    " device_energy_j REAL NOT NULL, energy_j REAL NOT NULL, energy_source TEXT NOT NULL,"
    " device_from_j REAL, device_to_j REAL,"
    " PRIMARY KEY (job_id, device));";

// Version 1 -> 2 (shared-device shares): what version 2 added, nothing else touched.
const char *migrate_1_to_2_sql =
    "ALTER TABLE jobs ADD COLUMN gpu_share TEXT NOT NULL DEFAULT 'allocation';"
    "ALTER TABLE jobs ADD COLUMN fg_allocated REAL;"
    "CREATE TABLE IF NOT EXISTS job_devices ("
    " job_id INTEGER NOT NULL REFERENCES jobs(id), device TEXT NOT NULL, peers INTEGER NOT NULL,"
    " attached_h REAL NOT NULL, used_share_h REAL NOT NULL, share_h REAL NOT NULL, fraction REAL NOT NULL,"
    " device_energy_j REAL NOT NULL, energy_j REAL NOT NULL, energy_source TEXT NOT NULL,"
    " PRIMARY KEY (job_id, device));";

// Version 2 -> 3: when each run started (what --since filters on; older rows get their end
// time less their wall time, to the second), and the device counter interval of a part split
// at the counter's readings.
const char *migrate_2_to_3_sql =
    "ALTER TABLE jobs ADD COLUMN started_at TEXT;"
    "UPDATE jobs SET started_at = strftime('%Y-%m-%dT%H:%M:%SZ', julianday(recorded_at) - wall_s / 86400.0);"
    "CREATE INDEX IF NOT EXISTS jobs_started_at ON jobs(started_at);"
    "ALTER TABLE job_devices ADD COLUMN device_from_j REAL;"
    "ALTER TABLE job_devices ADD COLUMN device_to_j REAL;";

// The start of a run, in the ledger's form: what --since compares with. A ledger too old to
// store it (read as it is) has the end time less the wall time instead.
std::string started_at_column(int version)
{
    return version >= 3 ? "started_at" : "strftime('%Y-%m-%dT%H:%M:%SZ', julianday(recorded_at) - wall_s / 86400.0)";
}

// SQLite refused a lock without waiting (see Ledger::Ledger); the failed step can be retried.
class LedgerBusy : public LedgerError {
public:
    using LedgerError::LedgerError;
};

// The error of db's last call, as the type that says whether a retry can succeed.
[[noreturn]] void throw_sqlite_error(sqlite3 *db, std::string msg = {})
{
    if (msg.empty())
        msg = sqlite3_errmsg(db);
    if ((sqlite3_errcode(db) & 0xff) == SQLITE_BUSY)
        throw LedgerBusy(msg);
    throw LedgerError(msg);
}

// A prepared statement that finalizes itself.
class Statement {
public:
    Statement(sqlite3 *db, const char *sql) : db_(db)
    {
        if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK)
            throw_sqlite_error(db);
    }
    ~Statement() { sqlite3_finalize(stmt_); }
    Statement(const Statement &) = delete;
    Statement &operator=(const Statement &) = delete;

    Statement &bind(int i, const std::string &s)
    {
        check(sqlite3_bind_text(stmt_, i, s.c_str(), -1, SQLITE_TRANSIENT));
        return *this;
    }
    Statement &bind(int i, double v)
    {
        check(sqlite3_bind_double(stmt_, i, v));
        return *this;
    }
    Statement &bind(int i, long long v)
    {
        check(sqlite3_bind_int64(stmt_, i, v));
        return *this;
    }
    Statement &bind_null(int i)
    {
        check(sqlite3_bind_null(stmt_, i));
        return *this;
    }
    void reset()
    {
        sqlite3_reset(stmt_);
        sqlite3_clear_bindings(stmt_);
    }
    // true while rows come back.
    bool step()
    {
        int rc = sqlite3_step(stmt_);
        if (rc == SQLITE_ROW)
            return true;
        if (rc == SQLITE_DONE)
            return false;
        throw_sqlite_error(db_);
    }
    std::string text(int col) const
    {
        const unsigned char *t = sqlite3_column_text(stmt_, col);
        return t ? reinterpret_cast<const char *>(t) : "";
    }
    double real(int col) const { return sqlite3_column_double(stmt_, col); }
    long long integer(int col) const { return sqlite3_column_int64(stmt_, col); }
    bool is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

private:
    void check(int rc)
    {
        if (rc != SQLITE_OK)
            throw_sqlite_error(db_);
    }
    sqlite3 *db_;
    sqlite3_stmt *stmt_ = nullptr;
};

bool all_digits(const std::string &s, size_t from, size_t n)
{
    if (from + n > s.size())
        return false;
    for (size_t i = from; i < from + n; ++i)
        if (!std::isdigit(static_cast<unsigned char>(s[i])))
            return false;
    return true;
}

}  // namespace

std::string default_ledger_path(const std::function<const char *(const char *)> &env)
{
    if (const char *p = env("HETPU_LEDGER"); p && *p)
        return p;
    // The ledger lives with hetpu's other files: a run given its own HETPU_HOME (a test, a
    // benchmark) must not charge into the user's ledger.
    if (const char *h = env("HETPU_HOME"); h && *h)
        return std::string(h) + "/ledger.sqlite";
    if (const char *x = env("XDG_DATA_HOME"); x && *x)
        return std::string(x) + "/hetpu/ledger.sqlite";
    const char *home = env("HOME");
    return std::string(home && *home ? home : ".") + "/.local/share/hetpu/ledger.sqlite";
}

namespace {
std::string utc_iso(std::time_t t)
{
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}
}  // namespace

std::string utc_now_iso() { return utc_iso(std::time(nullptr)); }

namespace {
// A run's start from its wall time, to the second below (a run that started within the
// second --since names is on or after it).
std::string utc_iso_seconds_ago(double seconds)
{
    const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    return utc_iso(static_cast<std::time_t>(std::floor(now - std::max(0.0, seconds))));
}
}  // namespace

std::string normalise_since(const std::string &since)
{
    // YYYY-MM-DD, optionally followed by 'T' or ' ' and HH:MM[:SS][Z].
    const std::string hint = "--since '" + since + "': expected a date YYYY-MM-DD or date-time YYYY-MM-DDTHH:MM[:SS]";
    if (!(all_digits(since, 0, 4) && since.size() >= 10 && since[4] == '-' && all_digits(since, 5, 2) &&
          since[7] == '-' && all_digits(since, 8, 2)))
        throw LedgerError(hint);
    std::string out = since.substr(0, 10);
    if (since.size() == 10)
        return out + "T00:00:00Z";
    if ((since[10] != 'T' && since[10] != ' ') || !all_digits(since, 11, 2) || since.size() < 16 || since[13] != ':' ||
        !all_digits(since, 14, 2))
        throw LedgerError(hint);
    out += "T" + since.substr(11, 5);
    size_t rest = 16;
    if (since.size() >= 19 && since[16] == ':' && all_digits(since, 17, 2)) {
        out += since.substr(16, 3);
        rest = 19;
    } else
        out += ":00";
    if (rest < since.size() && !(rest + 1 == since.size() && since[rest] == 'Z'))
        throw LedgerError(hint);
    return out + "Z";
}

// Reads the schema version and, for a writer, enters WAL and creates the schema. Returns
// true for a read-only ledger (nothing to set up).
bool Ledger::open_schema(bool read_only)
{
    long long version;
    {
        Statement v(db_, "PRAGMA user_version");  // finalized at once: WAL cannot be entered in a read
        v.step();
        version = v.integer(0);
    }
    if (version > ledger_schema_version)
        throw LedgerError("schema version " + std::to_string(version) + " is newer than this hetpu's (" +
                          std::to_string(ledger_schema_version) + "); use a newer hetpu or another HETPU_LEDGER");
    version_ = int(version);
    if (read_only) {
        if (version == 0)
            throw LedgerError("not a hetpu ledger (no schema)");
        return true;
    }
    // WAL lets readers (hetpu su report) run beside writers; NORMAL sync is durable against
    // a killed process, which is what a job ledger has to survive.
    exec("PRAGMA journal_mode=WAL");  // persistent; a no-op once the file is in WAL mode
    exec("PRAGMA synchronous=NORMAL");
    // Every job opens, writes one transaction and closes: a checkpoint (two fsyncs) on
    // each close would cost more than the job's row. SQLite's auto-checkpoint (every
    // 1000 pages) keeps the WAL bounded instead.
    sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
    if (version == 0) {
        // Two jobs may create the ledger at once: IMMEDIATE serialises them, IF NOT EXISTS
        // makes the loser's pass harmless.
        immediate_transaction([&] {
            exec(schema_sql);
            exec(("PRAGMA user_version=" + std::to_string(ledger_schema_version)).c_str());
        });
        version_ = ledger_schema_version;
    } else if (version < ledger_schema_version) {
        migrate();
    }
    return false;
}

void Ledger::immediate_transaction(const std::function<void()> &body)
{
    exec("BEGIN IMMEDIATE");
    try {
        body();
        exec("COMMIT");
    } catch (...) {
        sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
    }
}

void Ledger::migrate()
{
    // Several jobs may find the old version at once: the version is read again inside the
    // IMMEDIATE transaction, so exactly one migrates and the others see it done.
    immediate_transaction([&] {
        long long version;
        {
            Statement v(db_, "PRAGMA user_version");
            v.step();
            version = v.integer(0);
        }
        if (version == 1) {
            exec(migrate_1_to_2_sql);
            version = 2;
        }
        if (version == 2)
            exec(migrate_2_to_3_sql);
        exec(("PRAGMA user_version=" + std::to_string(ledger_schema_version)).c_str());
    });
    version_ = ledger_schema_version;
}

Ledger::Ledger(const std::string &path, bool read_only) : path_(path)
{
    if (!read_only) {
        std::filesystem::path dir = std::filesystem::path(path).parent_path();
        std::error_code ec;
        if (!dir.empty())
            std::filesystem::create_directories(dir, ec);
        if (ec)
            throw LedgerError("ledger " + path + ": cannot create the directory " + dir.string() + " (" + ec.message() +
                              "); set HETPU_LEDGER to a writable file");
    }
    int flags = read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    if (sqlite3_open_v2(path.c_str(), &db_, flags | SQLITE_OPEN_FULLMUTEX, nullptr) != SQLITE_OK) {
        std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
        sqlite3_close(db_);
        db_ = nullptr;
        throw LedgerError("ledger " + path + ": cannot open (" + msg + ")" +
                          (read_only ? "; is the path right? (--ledger FILE or HETPU_LEDGER)"
                                     : "; is the directory writable? set HETPU_LEDGER to a writable file"));
    }
    sqlite3_busy_timeout(db_, busy_timeout_ms);
    try {
        // SQLite answers SQLITE_BUSY at once, without its busy handler, where waiting could
        // deadlock: two new connections both switching the file to WAL, each holding the
        // shared lock the other needs released. Every step below is idempotent, so the loser
        // backs off and starts over, within the same bound as the busy timeout.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_timeout_ms);
        for (int attempt = 0;; ++attempt) {
            try {
                if (open_schema(read_only))
                    return;
                break;
            } catch (const LedgerBusy &) {
                if (std::chrono::steady_clock::now() > deadline)
                    throw;
                std::this_thread::sleep_for(std::chrono::milliseconds(1 + (attempt * 7 + getpid()) % 20));
            }
        }
    } catch (const LedgerError &e) {
        std::string msg = e.what();
        sqlite3_close(db_);
        db_ = nullptr;
        if (msg.find("not a database") != std::string::npos)
            msg += ": the ledger is corrupt or not an SQLite file; move it aside (a new one is created) or set "
                   "HETPU_LEDGER";
        else if (msg.find("readonly") != std::string::npos || msg.find("read-only") != std::string::npos ||
                 msg.find("unable to open") != std::string::npos)
            msg += ": the ledger is not writable; fix its permissions or set HETPU_LEDGER to a writable file";
        throw LedgerError("ledger " + path + ": " + msg);
    }
}

Ledger::~Ledger() { sqlite3_close(db_); }

void Ledger::exec(const char *sql) const
{
    char *err = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
        std::string msg = err ? err : "";
        sqlite3_free(err);
        throw_sqlite_error(db_, msg);
    }
}

void Ledger::fail(const std::string &what) const { throw LedgerError("ledger " + path_ + ": " + what); }

long long Ledger::record(JobRecord job)
{
    if (job.started_at.empty() && job.recorded_at.empty())
        job.started_at = utc_iso_seconds_ago(job.wall_s);
    if (job.recorded_at.empty())
        job.recorded_at = utc_now_iso();
    try {
        exec("BEGIN IMMEDIATE");
    } catch (const LedgerError &e) {
        fail(std::string("cannot start a transaction (") + e.what() + ")");
    }
    try {
        long long id;
        {
            Statement s(
                db_, "INSERT INTO jobs (recorded_at, user, host, app, policy, partition, fraction_source, slurm_job_id,"
                     " nodes, cores, gpus, mem_gib, fc, fg, fm, weight, wall_s, su, energy_j, energy_source, gco2e, "
                     "worker_rows, gpu_share, fg_allocated, started_at)"
                     " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
                     " COALESCE(?25, strftime('%Y-%m-%dT%H:%M:%SZ', julianday(?1) - ?17 / 86400.0)))");
            s.bind(1, job.recorded_at).bind(2, job.user).bind(3, job.host).bind(4, job.app).bind(5, job.policy);
            s.bind(6, job.partition).bind(7, job.fraction_source).bind(8, job.slurm_job_id);
            s.bind(9, static_cast<long long>(job.nodes)).bind(10, job.cores).bind(11, job.gpus).bind(12, job.mem_gib);
            s.bind(13, job.fc).bind(14, job.fg).bind(15, job.fm).bind(16, job.weight).bind(17, job.wall_s);
            s.bind(18, job.su).bind(19, job.energy_j).bind(20, job.energy_source);
            if (job.gco2e)
                s.bind(21, *job.gco2e);
            else
                s.bind_null(21);
            s.bind(22, static_cast<long long>(job.workers.size()));
            s.bind(23, job.gpu_share).bind(24, job.fg_allocated);
            if (job.started_at.empty())
                s.bind_null(25);  // a record that came with its end time: start = end - wall
            else
                s.bind(25, job.started_at);
            s.step();
            id = sqlite3_last_insert_rowid(db_);
        }
        Statement w(db_, "INSERT INTO job_workers (job_id, worker_type, workers, tasks, busy_s, energy_j, "
                         "energy_source, model_energy_j)"
                         " VALUES (?,?,?,?,?,?,?,?)");
        for (const WorkerTypeUsage &u : job.workers) {
            w.reset();
            w.bind(1, id).bind(2, u.worker_type).bind(3, static_cast<long long>(u.workers)).bind(4, u.tasks);
            w.bind(5, u.busy_s).bind(6, u.energy_j).bind(7, u.energy_source).bind(8, u.model_energy_j);
            w.step();
        }
        Statement d(db_, "INSERT INTO job_devices (job_id, device, peers, attached_h, used_share_h, share_h, fraction,"
                         " device_energy_j, energy_j, energy_source, device_from_j, device_to_j)"
                         " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
        for (const DeviceShareUsage &u : job.devices) {
            d.reset();
            d.bind(1, id).bind(2, u.device).bind(3, static_cast<long long>(u.peers)).bind(4, u.attached_h);
            d.bind(5, u.used_share_h).bind(6, u.share_h).bind(7, u.fraction).bind(8, u.device_energy_j);
            d.bind(9, u.energy_j).bind(10, u.energy_source);
            for (const auto &[column, value] : {std::pair{11, u.device_from_j}, std::pair{12, u.device_to_j}}) {
                if (value)
                    d.bind(column, *value);
                else
                    d.bind_null(column);
            }
            d.step();
        }
        exec("COMMIT");
        return id;
    } catch (const LedgerError &e) {
        sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
        fail(std::string("the job was not recorded (") + e.what() + ")");
    }
}

std::vector<JobRecord> Ledger::jobs(const std::string &since) const
{
    const std::string from = since.empty() ? "" : normalise_since(since);
    std::vector<JobRecord> out;
    try {
        Statement s(
            db_,
            ("SELECT id, recorded_at, user, host, app, policy, partition, fraction_source, slurm_job_id, nodes, cores,"
             " gpus, mem_gib, fc, fg, fm, weight, wall_s, su, energy_j, energy_source, gco2e, " +
             std::string(version_ >= 2 ? "gpu_share, fg_allocated" : "'allocation', NULL") + ", " +
             started_at_column(version_) + " FROM jobs WHERE " + started_at_column(version_) + " >= ? ORDER BY id")
                .c_str());
        s.bind(1, from);
        while (s.step()) {
            JobRecord j;
            j.id = s.integer(0);
            j.recorded_at = s.text(1);
            j.user = s.text(2), j.host = s.text(3), j.app = s.text(4), j.policy = s.text(5);
            j.partition = s.text(6), j.fraction_source = s.text(7), j.slurm_job_id = s.text(8);
            j.nodes = static_cast<int>(s.integer(9));
            j.cores = s.real(10), j.gpus = s.real(11), j.mem_gib = s.real(12);
            j.fc = s.real(13), j.fg = s.real(14), j.fm = s.real(15), j.weight = s.real(16);
            j.wall_s = s.real(17), j.su = s.real(18), j.energy_j = s.real(19), j.energy_source = s.text(20);
            if (!s.is_null(21))
                j.gco2e = s.real(21);
            j.gpu_share = s.text(22);
            j.fg_allocated = s.is_null(23) ? j.fg : s.real(23);  // version 1: fg was the allocation
            j.started_at = s.text(24);
            out.push_back(std::move(j));
        }
        for (JobRecord &j : out) {
            Statement w(
                db_,
                "SELECT worker_type, workers, tasks, busy_s, energy_j, energy_source, model_energy_j FROM job_workers"
                " WHERE job_id = ? ORDER BY worker_type");
            w.bind(1, j.id);
            while (w.step()) {
                WorkerTypeUsage u;
                u.worker_type = w.text(0);
                u.workers = static_cast<int>(w.integer(1));
                u.tasks = w.integer(2);
                u.busy_s = w.real(3), u.energy_j = w.real(4), u.energy_source = w.text(5), u.model_energy_j = w.real(6);
                j.workers.push_back(u);
            }
            if (version_ < 2)
                continue;  // an old ledger read as it is: no device rows
            Statement d(db_, ("SELECT device, peers, attached_h, used_share_h, share_h, fraction, device_energy_j,"
                              " energy_j, energy_source, " +
                              std::string(version_ >= 3 ? "device_from_j, device_to_j" : "NULL, NULL") +
                              " FROM job_devices WHERE job_id = ? ORDER BY device")
                                 .c_str());
            d.bind(1, j.id);
            while (d.step()) {
                DeviceShareUsage u;
                u.device = d.text(0);
                u.peers = static_cast<int>(d.integer(1));
                u.attached_h = d.real(2), u.used_share_h = d.real(3), u.share_h = d.real(4), u.fraction = d.real(5);
                u.device_energy_j = d.real(6), u.energy_j = d.real(7), u.energy_source = d.text(8);
                if (!d.is_null(9) && !d.is_null(10)) {
                    u.device_from_j = d.real(9);
                    u.device_to_j = d.real(10);
                }
                j.devices.push_back(u);
            }
        }
    } catch (const LedgerError &e) {
        fail(e.what());
    }
    return out;
}

std::vector<LedgerTotals> Ledger::totals(const std::string &by, const std::string &since) const
{
    if (by != "user" && by != "partition" && by != "app")
        throw LedgerError("--by '" + by + "': expected user, partition, app or device");
    const std::string from = since.empty() ? "" : normalise_since(since);
    // `by` is one of three fixed column names, never user text.
    const std::string sql = "SELECT " + by +
                            ", COUNT(*), SUM(su), SUM(energy_j), TOTAL(gco2e), SUM(wall_s) FROM jobs"
                            " WHERE " +
                            started_at_column(version_) + " >= ? GROUP BY " + by + " ORDER BY SUM(su) DESC, " + by;
    std::vector<LedgerTotals> out;
    try {
        Statement s(db_, sql.c_str());
        s.bind(1, from);
        while (s.step())
            out.push_back({s.text(0), s.integer(1), s.real(2), s.real(3), s.real(4), s.real(5)});
    } catch (const LedgerError &e) {
        fail(e.what());
    }
    return out;
}

std::vector<DeviceTotals> Ledger::device_totals(const std::string &since) const
{
    const std::string from = since.empty() ? "" : normalise_since(since);
    std::vector<DeviceTotals> out;
    if (version_ < 2)
        return out;  // an old ledger has no device rows
    try {
        // Each job's SU goes to its devices in proportion to their share-hours.
        const std::string sql = "SELECT d.device, COUNT(*), SUM(d.peers > 0), SUM(d.share_h), SUM(d.used_share_h),"
                                " SUM(d.energy_j),"
                                " TOTAL(j.su * CASE WHEN t.h > 0 THEN d.share_h / t.h ELSE 0 END)"
                                " FROM job_devices d JOIN jobs j ON j.id = d.job_id"
                                " JOIN (SELECT job_id, SUM(share_h) AS h FROM job_devices GROUP BY job_id) t"
                                " ON t.job_id = d.job_id WHERE " +
                                started_at_column(version_) + " >= ? GROUP BY d.device ORDER BY d.device";
        Statement s(db_, sql.c_str());
        s.bind(1, from);
        while (s.step())
            out.push_back({s.text(0), s.integer(1), s.integer(2), s.real(3), s.real(4), s.real(5), s.real(6)});
    } catch (const LedgerError &e) {
        fail(e.what());
    }
    return out;
}

std::string Ledger::integrity_check() const
{
    Statement s(db_, "PRAGMA integrity_check");
    std::string all;
    while (s.step())
        all += (all.empty() ? "" : "; ") + s.text(0);
    return all;
}

}  // namespace hetpu::accounting
