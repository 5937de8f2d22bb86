# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=sh
# Sourced by the tests that interrupt a run mid-way (kill, scancel) and need it still running
# when they do, whatever the machine's load and speed.
#
# catch_run SIGNAL_FN READY_FN: runs the run under test in short slices (continued, about
# 10 ms, stopped) and looks at it only while it is stopped, until READY_FN holds (a
# checkpoint on disk, a grant). It then leaves the run stopped, so whatever the test does
# next (SIGKILL, scancel) lands mid-run: between two looks the run advances one slice, never
# to its end unless it was about to end anyway. SIGNAL_FN SIG sends SIG to every process of
# the run and fails once the run has ended. Returns 1 if the run ended first, 2 after 30000
# slices (at least 5 minutes) without READY_FN.
catch_run() {
    catch_tries=0
    while :; do
        "$1" STOP || return 1
        "$2" && return 0
        "$1" CONT || return 1
        catch_tries=$((catch_tries + 1))
        [ "$catch_tries" -lt 30000 ] || return 2
        sleep 0.01
    done
}

# signal_pid PID SIG: SIGNAL_FN for a single process; a zombie (ended, not yet waited for)
# counts as ended.
signal_pid() {
    kill -s "$2" "$1" 2>/dev/null || return 1
    case "$(ps -o stat= -p "$1" 2>/dev/null)" in Z* | '') return 1 ;; esac
}
