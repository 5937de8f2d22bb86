#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# `hetpu batch`: a job that fails, one that hangs past the timeout, one that crashes (a
# signal), ones that succeed; N at a time; the job's whole process group ends with it.
# Nothing here depends on timing luck: the timeout only has to outlast `true` and `echo`.
. "$(dirname "$0")/node_env.sh"
tool="$HETPU_BUILDDIR/tools/hetpu"
dir=$STARPU_HOME

# A program that crashes (under dash's `sh -c` it could read as "FAILED (exit 139)").
printf '#!/bin/sh\nkill -SEGV $$\n' >"$dir/segv"
chmod +x "$dir/segv"
# Two jobs that wait for each other: they can only both succeed if they run at once.
cat >"$dir/jobs" <<JOBS
# a comment, then a blank line

exit 3
sleep 300
kill -SEGV \$\$
touch "$dir/a"; while [ ! -e "$dir/b" ]; do sleep 0.05; done
touch "$dir/b"; while [ ! -e "$dir/a" ]; do sleep 0.05; done
sleep 300 & echo \$! >"$dir/stray"; echo hello
$dir/segv --a-simple-command
echo compound; $dir/segv
JOBS
"$tool" batch --jobs "$dir/jobs" --workers 3 --timeout 20 --json "$dir/out.jsonl" --log-dir "$dir" \
    --label test >"$dir/summary" 2>"$dir/progress"
rc=$?
[ "$rc" -eq 1 ] || { cat "$dir/progress"; fail "exit status $rc, expected 1 (some jobs failed)"; }
grep -q "8 jobs, 3 workers: 3 ok, 1 failed, 1 timed out, 3 crashed" "$dir/summary" || { cat "$dir/summary"; fail "summary"; }
grep -q "throughput" "$dir/summary" && grep -q "mean turnaround" "$dir/summary" || fail "no throughput/turnaround"
grep -q "TIMED OUT" "$dir/progress" || fail "no progress line for the timeout"
grep -qx hello "$dir/job-5.out" || fail "job output not in the log dir"
# The progress lines name a job by the index its log files and JSON line carry.
grep -q "job 1 TIMED OUT" "$dir/progress" && grep -q "job 2 CRASHED" "$dir/progress" &&
    grep -q "job 5 ok" "$dir/progress" || { cat "$dir/progress"; fail "progress lines name the wrong job"; }
python3 - "$dir/out.jsonl" <<'PY' || fail "JSON lines are wrong (see above)"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
jobs = sorted((l for l in lines if "job" in l), key=lambda l: l["job"])
summary = [l for l in lines if l.get("summary")]
assert len(jobs) == 8 and len(summary) == 1, lines
assert jobs[0]["exit_status"] == 3 and not jobs[0]["ok"] and not jobs[0]["timed_out"], jobs[0]
assert jobs[1]["timed_out"] and not jobs[1]["crashed"] and not jobs[1]["ok"], jobs[1]
assert jobs[1]["duration_s"] >= 20, jobs[1]
assert jobs[2]["crashed"] and jobs[2]["signal"] == 11 and not jobs[2]["timed_out"], jobs[2]
for j in jobs[3:6]:
    assert j["ok"] and j["exit_status"] == 0 and j["signal"] == 0, j
    assert j["end_s"] >= j["start_s"] >= 0, j
# The crashing program: exec'd as one simple command, its own signal; inside a list, read
# from the shell's 128 + 11.
assert jobs[6]["crashed"] and jobs[6]["signal"] == 11 and not jobs[6]["signal_via_shell"], jobs[6]
assert jobs[7]["crashed"] and jobs[7]["signal"] == 11 and jobs[7]["signal_via_shell"], jobs[7]
s = summary[0]
assert (s["ok"], s["failed"], s["timed_out"], s["crashed"], s["workers"]) == (3, 1, 1, 3, 3), s
assert s["label"] == "test" and s["makespan_s"] >= 20, s
assert abs(s["mean_turnaround_s"] - sum(j["end_s"] for j in jobs) / 8) < 1e-9, s
PY
# The stray background `sleep` died with its job (gone, or a zombie not yet reaped by init).
stray=$(cat "$dir/stray")
i=0
while [ -d "/proc/$stray" ] && ! grep -q '^[^ ]* ([^)]*) Z' "/proc/$stray/stat" 2>/dev/null; do
    i=$((i + 1)); [ $i -lt 100 ] || fail "the job's background process $stray outlived it"; sleep 0.1
done

# All ok: exit status 0. Bad invocations: exit status 2 and a message.
printf 'true\ntrue\n' >"$dir/ok"
"$tool" batch --jobs "$dir/ok" --workers 2 --quiet-jobs >"$dir/summary" 2>/dev/null || fail "all-ok batch"
grep -q "2 jobs, 2 workers: 2 ok" "$dir/summary" || fail "all-ok summary"
if "$tool" batch --jobs "$dir/missing" 2>"$dir/err"; then fail "missing jobs file accepted"; fi
grep -q "cannot read" "$dir/err" || fail "missing file message"
printf '# nothing\n\n' >"$dir/empty"
if "$tool" batch --jobs "$dir/empty" 2>"$dir/err"; then fail "empty jobs file accepted"; fi
grep -q "no command line" "$dir/err" || fail "empty file message"
echo "hetpu batch: ok"
