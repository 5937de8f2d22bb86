// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tools/su/su_report.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "accounting_hook/core/job_json.h"
#include "accounting_hook/core/ledger.h"
#include "common/settings.h"
#include "accounting_hook/core/run_charge.h"
#include "tools/su/su_options.h"

namespace hetpu::su {

namespace {

using namespace hetpu::accounting;

int device_report(const Ledger &ledger, const std::string &since, bool json, const std::string &path)
{
    const std::vector<DeviceTotals> totals = ledger.device_totals(since);
    if (!json)
        std::printf("%-24s %6s %7s %12s %12s %12s %14s\n", "device", "jobs", "shared", "share-h", "used-h", "energy",
                    "SU");
    for (const DeviceTotals &t : totals) {
        if (json) {
            std::printf("%s\n", nlohmann::json({{"by", "device"},
                                                {"key", t.device},
                                                {"jobs", t.jobs},
                                                {"shared_jobs", t.shared_jobs},
                                                {"share_h", t.share_h},
                                                {"used_share_h", t.used_share_h},
                                                {"energy_j", t.energy_j},
                                                {"su", t.su}})
                                    .dump()
                                    .c_str());
            continue;
        }
        std::printf("%-24s %6lld %7lld %12.4g %12.4g %12s %14.6g\n", t.device.c_str(), t.jobs, t.shared_jobs, t.share_h,
                    t.used_share_h, format_joules(t.energy_j).c_str(), t.su);
    }
    if (!json && totals.empty())
        std::printf("(no runs on devices shared through the MGB arbiter%s in %s)\n",
                    since.empty() ? "" : (" since " + since).c_str(), path.c_str());
    return 0;
}

}  // namespace

int report_command(int argc, char **argv)
{
    Options o("report", argc, argv,
              {{"ledger", "FILE", "the ledger (default: $HETPU_LEDGER, else $HETPU_HOME/ledger.sqlite)"},
               {"since", "DATE", "only runs that started on or after DATE (YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS])"},
               {"by", "user|partition|app|device",
                "totals per user, partition, application, or GPU shared through the MGB arbiter"},
               {"json", "", "JSON lines instead of a table"}},
              "The runs the accounting hook recorded, with their service units and energy.");
    const std::string path = o.has("ledger") ? o.get("ledger") : default_ledger_path(process_env);
    const std::string since = o.get("since");
    if (!since.empty())
        normalise_since(since);  // a bad date is a usage error before the ledger is opened
    Ledger ledger(path, /*read_only=*/true);
    const bool json = o.has("json");

    if (o.has("by")) {
        const std::string by = o.get("by");
        if (by == "device")
            return device_report(ledger, since, json, path);
        std::vector<LedgerTotals> totals = ledger.totals(by, since);
        if (!json)
            std::printf("%-20s %6s %14s %12s %12s %12s\n", by.c_str(), "jobs", "SU", "energy", "gCO2e", "wall (s)");
        for (const LedgerTotals &t : totals) {
            if (json) {
                std::printf("%s\n", nlohmann::json({{"by", by},
                                                    {"key", t.key},
                                                    {"jobs", t.jobs},
                                                    {"su", t.su},
                                                    {"energy_j", t.energy_j},
                                                    {"gco2e", t.gco2e},
                                                    {"wall_s", t.wall_s}})
                                        .dump()
                                        .c_str());
                continue;
            }
            std::printf("%-20s %6lld %14.6g %12s %12.4g %12.3f\n", t.key.c_str(), t.jobs, t.su,
                        format_joules(t.energy_j).c_str(), t.gco2e, t.wall_s);
        }
        if (!json && totals.empty())
            std::printf("(no jobs%s in %s)\n", since.empty() ? "" : (" since " + since).c_str(), path.c_str());
        return 0;
    }

    std::vector<JobRecord> jobs = ledger.jobs(since);
    if (!json)
        std::printf("%5s %-20s %-10s %-14s %-8s %-10s %10s %12s  %s\n", "job", "recorded (UTC)", "user", "app",
                    "policy", "partition", "wall (s)", "SU", "energy [source]");
    double total_su = 0;
    for (const JobRecord &j : jobs) {
        total_su += j.su;
        if (json) {
            std::printf("%s\n", job_to_json(j).dump().c_str());
            continue;
        }
        std::printf("%5lld %-20s %-10s %-14s %-8s %-10s %10.3f %12.6g  %s [%s]\n", j.id, j.recorded_at.c_str(),
                    j.user.c_str(), j.app.c_str(), j.policy.c_str(), j.partition.c_str(), j.wall_s, j.su,
                    format_joules(j.energy_j).c_str(), j.energy_source.c_str());
        if (!j.devices.empty())
            std::printf("      %s\n", shared_devices_line(j).c_str());
    }
    if (!json)
        std::printf("%zu job%s, %.6g SU (%s)\n", jobs.size(), jobs.size() == 1 ? "" : "s", total_su, path.c_str());
    return 0;
}

}  // namespace hetpu::su
