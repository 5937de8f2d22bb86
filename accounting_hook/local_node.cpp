// SPDX-License-Identifier: LGPL-2.1-or-later
#include "accounting_hook/local_node.h"

#include <hwloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace hetpu::accounting {

Partition detect_local_node(int gpus, hwloc_topology_t loaded)
{
    Partition p;
    p.name = "local";
    int cores = 0, sockets = 0;
    double mem_bytes = 0;
    auto read = [&](hwloc_topology_t topo) {
        cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
        sockets = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
        mem_bytes = static_cast<double>(hwloc_get_root_obj(topo)->total_memory);
    };
    hwloc_topology_t topo;
    if (loaded)
        read(loaded);
    else if (hwloc_topology_init(&topo) == 0) {
        if (hwloc_topology_load(topo) == 0)
            read(topo);
        hwloc_topology_destroy(topo);
    }
    const char *how = "hwloc";
    if (cores <= 0 || mem_bytes <= 0) {
        how = "sysconf";
        cores = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
        mem_bytes = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
        sockets = 1;
    }
    p.cores_per_node = cores;
    p.cpu_sockets = std::max(1, std::min(sockets, cores));
    p.mem_gib_per_node = mem_bytes / (1024.0 * 1024 * 1024);
    p.cpu_tdp_w = assumed_cpu_core_w * p.cores_per_socket();
    p.gpus_per_node = std::max(0, gpus);
    p.gpu_tdp_w = p.gpus_per_node > 0 ? assumed_gpu_tdp_w : 0;
    char origin[160];
    std::snprintf(origin, sizeof origin, "detected by %s; TDP assumed %g W per core%s, set HETPU_PARTITION_CONFIG", how,
                  assumed_cpu_core_w, p.gpus_per_node > 0 ? " and 300 W per GPU" : "");
    p.origin = origin;
    return p;
}

}  // namespace hetpu::accounting
