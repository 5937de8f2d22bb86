// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/mpi/core/rank_liveness.h"

#include <algorithm>

namespace hetpu {

double liveness_limit(double configured_s, double longest_block_s)
{
    if (configured_s > 0)
        return configured_s;
    return std::max(kLivenessFloorS, kLivenessBlockFactor * longest_block_s);
}

double heartbeat_period(double limit_s) { return limit_s / 6; }

RankLiveness::RankLiveness(std::vector<int> watched, double configured_s, double now_s)
    : configured_s_(configured_s), next_beat_s_(now_s), last_turn_s_(now_s)
{
    for (int r : watched)
        watched_.push_back({r, now_s, now_s});
}

void RankLiveness::begin(double now_s)
{
    for (Watched &w : watched_)
        w.heard_s = w.progress_s = now_s;
    next_beat_s_ = last_turn_s_ = now_s;
}

RankLiveness::Watched *RankLiveness::find(int rank)
{
    for (Watched &w : watched_)
        if (w.rank == rank)
            return &w;
    return nullptr;
}

const RankLiveness::Watched *RankLiveness::find(int rank) const { return const_cast<RankLiveness *>(this)->find(rank); }

void RankLiveness::heard(int rank, double now_s, const WireAlive &alive)
{
    Watched *w = find(rank);
    if (!w)
        return;
    w->heard_s = std::max(w->heard_s, now_s);
    // Progress: its count grew, or it has nothing to do (waiting for work is no fault).
    // Under the default limit, a rank that reports before it has finished any block counts
    // as progressing: its first block may be long, and the limit knows no block yet.
    const bool first_block = configured_s_ <= 0 && alive.done == 0;
    if (alive.done > w->done || !alive.working || alive.last || first_block) {
        w->longest_gap_s = std::max(w->longest_gap_s, now_s - w->progress_s);
        w->progress_s = std::max(w->progress_s, now_s);
    }
    w->done = std::max(w->done, alive.done);
    w->finished = w->finished || alive.last;
    // Rank 0's limit is the job's; every rank follows the most generous one it hears of,
    // so that no rank gives up on rank 0 sooner than rank 0 gives up on it.
    longest_block_s_ = std::max(longest_block_s_, alive.longest_block_s);
    announced_limit_s_ = std::max(announced_limit_s_, alive.limit_s);
}

void RankLiveness::block_seen(double seconds) { longest_block_s_ = std::max(longest_block_s_, seconds); }

double RankLiveness::limit_s() const
{
    return std::max(liveness_limit(configured_s_, longest_block_s_), announced_limit_s_);
}

bool RankLiveness::heartbeat_due(double now_s)
{
    if (now_s < next_beat_s_)
        return false;
    next_beat_s_ = now_s + heartbeat_period(limit_s());
    return true;
}

bool RankLiveness::all_finished() const
{
    for (const Watched &w : watched_)
        if (!w.finished)
            return false;
    return true;
}

Overdue RankLiveness::overdue(double now_s) const
{
    const double limit = limit_s();
    Overdue worst;
    for (const Watched &w : watched_) {
        if (w.finished)
            continue;
        // Silent: nothing heard for longer than the limit. Stuck: heard lately (within two
        // heartbeats), but no progress for longer than the limit. A rank heard less lately is
        // neither yet: it may be silent, and is named so once the limit has passed.
        const bool silent = now_s - w.heard_s > limit;
        const bool stuck = now_s - w.progress_s > limit && now_s - w.heard_s <= 2 * heartbeat_period(limit);
        if (!silent && !stuck)
            continue;
        const bool reporting = !silent;
        const double since = reporting ? now_s - w.progress_s : now_s - w.heard_s;
        const bool before = worst.rank < 0 || (worst.reporting && !reporting) ||
                            (worst.reporting == reporting && since > worst.silent_s);
        if (before)
            worst = {w.rank, reporting, since};
    }
    return worst;
}

double RankLiveness::self_away_s(double now_s)
{
    const double away = now_s - last_turn_s_;
    last_turn_s_ = std::max(last_turn_s_, now_s);
    return away > limit_s() ? away : 0;
}

double RankLiveness::longest_gap_s(int rank) const
{
    const Watched *w = find(rank);
    return w ? w->longest_gap_s : 0;
}

}  // namespace hetpu
