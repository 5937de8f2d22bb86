// SPDX-License-Identifier: LGPL-2.1-or-later
// What every app that checkpoints through hetpu's backend (include/hetpu/ckpt.h) does the
// same way: the checkpoint directory checked before the backend starts, earlier checkpoints
// refused on a fresh run, and the backend's errors said with the app's name. Header-only:
// the apps' StarPU glue includes it, and it needs libhetpu_ckpt, which their glue links.
#pragma once

// hetpu/ckpt.h first: it wraps StarPU 1.3's starpu_disk.h for C++ (see the header).
#include <hetpu/ckpt.h>

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace hetpu::apps {

// A TOML basic string: backslash and quote escaped (a control character in a directory name
// makes the backend's parser report the path, which is the right message anyway).
inline std::string toml_string(const std::string &s)
{
    std::string out = "\"";
    for (char c : s) {
        if (c == '\\' || c == '"')
            out += '\\';
        out += c;
    }
    return out + "\"";
}

// "<app>: checkpoint: <what> failed: <the backend's message>"; returns 1.
inline int checkpoint_backend_error(const char *app, const std::string &what, int rc)
{
    const char *msg = hetpu_ckpt_last_error();
    std::fprintf(stderr, "%s: checkpoint: %s failed: %s\n", app, what.c_str(), msg && *msg ? msg : std::strerror(-rc));
    return 1;
}

// Before the backend starts on `dir`: a restart needs the directory, a fresh run creates it.
// 0, or 1 after saying why.
inline int prepare_checkpoint_dir(const char *app, const std::string &dir, bool restart)
{
    struct stat st;
    if (restart && !(::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode))) {
        std::fprintf(stderr,
                     "%s: --restart: no checkpoint directory '%s': give the --checkpoint-dir of the run to "
                     "continue, or run without --restart to start afresh\n",
                     app, dir.c_str());
        return 1;
    }
    if (!restart && ::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST) {
        std::fprintf(stderr, "%s: cannot create --checkpoint-dir '%s': %s\n", app, dir.c_str(), std::strerror(errno));
        return 1;
    }
    return 0;
}

// A fresh run, once the backend has started on `dir`: the directory must not hold checkpoints
// named `name` already (they would be mixed with this run's). `unit` names a version ("sweep",
// "iteration"). 0, or 1 after saying why.
inline int refuse_earlier_checkpoints(const char *app, const char *name, const std::string &dir, const char *unit)
{
    int64_t newest = 0;
    const int rc = hetpu_ckpt_latest(name, &newest);
    if (rc == 0) {
        std::fprintf(stderr,
                     "%s: --checkpoint-dir '%s' already holds %s checkpoints (newest: %s %lld): continue that run "
                     "with --restart, or give an empty directory\n",
                     app, dir.c_str(), name, unit, static_cast<long long>(newest));
        return 1;
    }
    return rc == -ENOENT ? 0 : checkpoint_backend_error(app, "looking for earlier checkpoints", rc);
}

// A restart: the newest complete version named `name` in `dir`. 0, or 1 after saying why.
inline int newest_checkpoint(const char *app, const char *name, const std::string &dir, int64_t &version)
{
    const int rc = hetpu_ckpt_latest(name, &version);
    if (rc == -ENOENT) {
        std::fprintf(stderr,
                     "%s: --restart: no complete %s checkpoint in '%s': check --checkpoint-dir, or run without "
                     "--restart to start afresh\n",
                     app, name, dir.c_str());
        return 1;
    }
    return rc == 0 ? 0 : checkpoint_backend_error(app, "looking for the newest checkpoint", rc);
}

}  // namespace hetpu::apps
