// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/mpi/mpi_rank_report.h"

#ifdef HETPU_HAVE_MPI

#include <hetpu/mpi.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace hetpu {
namespace {

// Sent as bytes: every rank runs the same binary.
struct WireRankSummary {
    int32_t rank;
    int32_t pad;
    char host[HETPU_REPORT_NAME_LEN];
    uint64_t share_offset, share_count, elements;
    uint64_t data_sent, data_received, control_sent, control_received;
    uint64_t max_rss;
};

struct WireWorkerTotals {
    WireWorker worker;
    uint32_t blocks;
    uint32_t copies;
    uint64_t elements;
    double busy_s;
    double transfer_s;
    double lost_s;
};

std::string wire_text(const char *s, size_t n) { return std::string(s, strnlen(s, n)); }

}  // namespace

void gather_workers(MPI_Comm comm, const std::vector<ClusterPu> &mine, const std::vector<WorkerTotals> &mine_totals,
                    std::vector<ClusterPu> &pus, std::vector<WorkerTotals> &totals)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    std::vector<WireWorkerTotals> wire(mine.size());
    for (size_t i = 0; i < mine.size(); ++i) {
        WireWorkerTotals &w = wire[i];
        std::memset(&w, 0, sizeof w);
        w.worker.local_worker = mine[i].local_worker;
        w.worker.kind = static_cast<int32_t>(mine[i].kind);
        std::snprintf(w.worker.name, sizeof w.worker.name, "%s", mine[i].name.c_str());
        std::snprintf(w.worker.host, sizeof w.worker.host, "%s", mine[i].host.c_str());
        if (i < mine_totals.size()) {
            w.blocks = mine_totals[i].blocks;
            w.elements = mine_totals[i].elements;
            w.busy_s = mine_totals[i].busy_s;
            w.transfer_s = mine_totals[i].transfer_s;
            w.copies = mine_totals[i].copies;
            w.lost_s = mine_totals[i].lost_s;
        }
    }
    int bytes = static_cast<int>(wire.size() * sizeof(WireWorkerTotals));
    std::vector<int> counts(static_cast<size_t>(size)), displs(static_cast<size_t>(size));
    MPI_Gather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
    int sum = 0;
    for (int r = 0; r < size; ++r) {
        displs[static_cast<size_t>(r)] = sum;
        sum += counts[static_cast<size_t>(r)];
    }
    std::vector<WireWorkerTotals> all(rank == 0 ? static_cast<size_t>(sum) / sizeof(WireWorkerTotals) : 0);
    MPI_Gatherv(wire.data(), bytes, MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE, 0, comm);
    pus.clear();
    totals.clear();
    size_t k = 0;
    for (int r = 0; r < size && rank == 0; ++r)
        for (int j = 0; j < counts[static_cast<size_t>(r)] / static_cast<int>(sizeof(WireWorkerTotals)); ++j, ++k) {
            const WireWorkerTotals &w = all[k];
            pus.push_back({r, w.worker.local_worker, static_cast<WorkerKind>(w.worker.kind),
                           wire_text(w.worker.name, sizeof w.worker.name),
                           wire_text(w.worker.host, sizeof w.worker.host)});
            WorkerTotals t;
            t.blocks = w.blocks;
            t.elements = w.elements;
            t.busy_s = w.busy_s;
            t.transfer_s = w.transfer_s;
            t.copies = w.copies;
            t.lost_s = w.lost_s;
            totals.push_back(t);
        }
}

void add_worker_reports(hetpu_divisible_report &report, const std::vector<ClusterPu> &pus,
                        const std::vector<WorkerTotals> &totals)
{
    for (size_t g = 0; g < pus.size() && report.nworkers < STARPU_NMAXWORKERS; ++g) {
        hetpu_worker_report &r = report.workers[report.nworkers++];
        const WorkerTotals &t = totals[g];
        r.workerid = pus[g].local_worker;
        r.type = pus[g].kind == WorkerKind::OpenCL ? STARPU_OPENCL_WORKER
                 : pus[g].kind == WorkerKind::Cuda ? STARPU_CUDA_WORKER
                                                   : STARPU_CPU_WORKER;
        std::snprintf(r.name, sizeof r.name, "%s", pus[g].name.c_str());
        r.blocks = t.blocks;
        r.elements = t.elements;
        r.busy_s = t.busy_s;
        r.transfer_s = t.transfer_s;
        r.copies = t.copies;
        r.lost_s = t.lost_s;
        r.rank = pus[g].rank;
        std::snprintf(r.host, sizeof r.host, "%s", pus[g].host.c_str());
    }
}

uint64_t max_rss_bytes()
{
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) != 0)
        return 0;
    return static_cast<uint64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

void gather_rank_reports(MPI_Comm comm, uint64_t share_offset, uint64_t share_count, uint64_t elements,
                         const RankTraffic &traffic, hetpu_divisible_report *report)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    WireRankSummary mine;
    std::memset(&mine, 0, sizeof mine);
    mine.rank = rank;
    std::snprintf(mine.host, sizeof mine.host, "%s", hetpu_host_name());
    mine.share_offset = share_offset;
    mine.share_count = share_count;
    mine.elements = elements;
    mine.data_sent = traffic.data_sent;
    mine.data_received = traffic.data_received;
    mine.control_sent = traffic.control_sent;
    mine.control_received = traffic.control_received;
    mine.max_rss = max_rss_bytes();
    std::vector<WireRankSummary> all(rank == 0 ? static_cast<size_t>(size) : 0);
    MPI_Gather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, 0, comm);
    if (rank != 0 || !report)
        return;
    report->nrank_reports = 0;
    for (const WireRankSummary &w : all) {
        if (report->nrank_reports >= HETPU_REPORT_MAX_RANKS)
            break;
        hetpu_rank_report &r = report->rank_reports[report->nrank_reports++];
        r = hetpu_rank_report{};  // what this gather does not carry (links) starts at 0
        r.rank = w.rank;
        std::snprintf(r.host, sizeof r.host, "%s", wire_text(w.host, sizeof w.host).c_str());
        r.share_offset = w.share_offset;
        r.share_count = w.share_count;
        r.elements = w.elements;
        r.data_bytes_sent = w.data_sent;
        r.data_bytes_received = w.data_received;
        r.control_bytes_sent = w.control_sent;
        r.control_bytes_received = w.control_received;
        r.max_rss_bytes = w.max_rss;
    }
}

}  // namespace hetpu

#endif  // HETPU_HAVE_MPI
