// SPDX-License-Identifier: LGPL-2.1-or-later
#include "common/gnuplot_png.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace hetpu {

std::string gnuplot_quoted(const std::string &text)
{
    std::string q = "'";
    for (char c : text)
        q += c == '\'' ? std::string("''") : std::string(1, c);
    return q + "'";
}

void gnuplot_png(const std::string &script, const std::string &png, int width, int height)
{
    const std::string tmp_png = png + ".tmp";
    const std::string full = "set terminal pngcairo size " + std::to_string(width) + "," + std::to_string(height) +
                             " noenhanced\nset output " + gnuplot_quoted(tmp_png) + "\n" + script + "\nset output\n";
    int in[2];
    if (pipe(in) != 0)
        throw std::runtime_error(std::string("cannot create a pipe to gnuplot: ") + std::strerror(errno));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
    posix_spawn_file_actions_addclose(&actions, in[1]);
    pid_t pid;
    char *argv[] = {const_cast<char *>("gnuplot"), nullptr};
    const int rc = posix_spawnp(&pid, "gnuplot", &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(in[0]);
    if (rc != 0) {
        close(in[1]);
        throw std::runtime_error(std::string("cannot run gnuplot: ") + std::strerror(rc) + " (install gnuplot-nox)");
    }
    // gnuplot dying early must not kill us with SIGPIPE: the write fails and its status says why.
    void (*old)(int) = std::signal(SIGPIPE, SIG_IGN);
    std::size_t done = 0;
    while (done < full.size()) {
        const ssize_t n = write(in[1], full.data() + done, full.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        done += static_cast<std::size_t>(n);
    }
    close(in[1]);
    std::signal(SIGPIPE, old);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || done < full.size()) {
        std::remove(tmp_png.c_str());
        throw std::runtime_error("gnuplot failed (see its message above)");
    }
    if (std::rename(tmp_png.c_str(), png.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        std::remove(tmp_png.c_str());
        throw std::runtime_error("cannot write " + png + ": " + why);
    }
}

}  // namespace hetpu
