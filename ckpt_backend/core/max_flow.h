// SPDX-License-Identifier: LGPL-2.1-or-later
// Dinic's max-flow, generic over the capacity type (double for the parametric search on
// time, int64 for the whole-byte schedule). Small dense graphs: a few dozen nodes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <queue>
#include <vector>

namespace hetpu::ckpt {

template <typename Cap> class MaxFlow {
public:
    explicit MaxFlow(int nodes, Cap eps = Cap(0)) : adj_(nodes), level_(nodes), it_(nodes), eps_(eps) {}

    // Returns the edge index (for flow_on()).
    int add_edge(int from, int to, Cap cap)
    {
        edges_.push_back({to, cap, cap});
        adj_[from].push_back(static_cast<int>(edges_.size()) - 1);
        edges_.push_back({from, Cap(0), Cap(0)});
        adj_[to].push_back(static_cast<int>(edges_.size()) - 1);
        return static_cast<int>(edges_.size()) - 2;
    }

    Cap run(int s, int t)
    {
        Cap total = Cap(0);
        while (bfs(s, t)) {
            std::fill(it_.begin(), it_.end(), 0);
            while (true) {
                Cap pushed = dfs(s, t, std::numeric_limits<Cap>::max());
                if (!(pushed > eps_))
                    break;
                total += pushed;
            }
        }
        return total;
    }

    Cap flow_on(int edge) const { return edges_[edge].original - edges_[edge].cap; }
    // After run(): nodes reachable from s in the residual graph (the source side of a min cut).
    std::vector<bool> source_side(int s) const
    {
        std::vector<bool> seen(adj_.size(), false);
        std::vector<int> stack{s};
        seen[s] = true;
        while (!stack.empty()) {
            int u = stack.back();
            stack.pop_back();
            for (int e : adj_[u])
                if (edges_[e].cap > eps_ && !seen[edges_[e].to]) {
                    seen[edges_[e].to] = true;
                    stack.push_back(edges_[e].to);
                }
        }
        return seen;
    }

private:
    struct Edge {
        int to;
        Cap cap, original;
    };

    bool bfs(int s, int t)
    {
        std::fill(level_.begin(), level_.end(), -1);
        std::queue<int> q;
        level_[s] = 0;
        q.push(s);
        while (!q.empty()) {
            int u = q.front();
            q.pop();
            for (int e : adj_[u])
                if (edges_[e].cap > eps_ && level_[edges_[e].to] < 0) {
                    level_[edges_[e].to] = level_[u] + 1;
                    q.push(edges_[e].to);
                }
        }
        return level_[t] >= 0;
    }

    Cap dfs(int u, int t, Cap limit)
    {
        if (u == t)
            return limit;
        for (std::size_t &i = it_[u]; i < adj_[u].size(); ++i) {
            int e = adj_[u][i];
            Edge &edge = edges_[e];
            if (!(edge.cap > eps_) || level_[edge.to] != level_[u] + 1)
                continue;
            Cap got = dfs(edge.to, t, std::min(limit, edge.cap));
            if (got > eps_) {
                edge.cap -= got;
                edges_[e ^ 1].cap += got;
                return got;
            }
        }
        return Cap(0);
    }

    std::vector<Edge> edges_;
    std::vector<std::vector<int>> adj_;
    std::vector<int> level_;
    std::vector<std::size_t> it_;
    Cap eps_;
};

}  // namespace hetpu::ckpt
