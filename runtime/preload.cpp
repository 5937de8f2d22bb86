// libhetpu-preload.so: puts an unmodified StarPU program under a hetpu policy.
//
//   LD_PRELOAD=libhetpu-preload.so STARPU_SCHED=greedy ./any_starpu_program
//
// The program's calls to starpu_init()/starpu_initialize() land here first; hetpu
// resolves STARPU_SCHED (its own policies and StarPU's) and then calls the real
// starpu_initialize with the resolved policy. StarPU's starpu_init() itself calls
// starpu_initialize() through the PLT, i.e. back into this file: the reentrancy guard
// forwards such nested calls untouched.
#include <dlfcn.h>

#include <cerrno>
#include <cstdio>
#include <exception>
#include <cstdlib>

#include "runtime/starpu_start.h"

namespace {

template <typename Fn> Fn real_symbol(const char *name)
{
    void *sym = dlsym(RTLD_NEXT, name);
    if (!sym) {
        std::fprintf(stderr, "hetpu-preload: cannot find StarPU's %s (%s); is the program linked against StarPU?\n", name,
                     dlerror());
        std::abort();
    }
    return reinterpret_cast<Fn>(sym);
}

int real_starpu_initialize(struct starpu_conf *conf, int *argc, char ***argv)
{
    using Fn = int (*)(struct starpu_conf *, int *, char ***);
    static Fn fn = real_symbol<Fn>("starpu_initialize");
    return fn(conf, argc, argv);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int starpu_initialize(struct starpu_conf *conf, int *argc, char ***argv)
{
    if (hetpu::inside_start_starpu())
        return real_starpu_initialize(conf, argc, argv);
    try {
        return hetpu::start_starpu(conf, argc, argv, &real_starpu_initialize, hetpu::HelpAction::Exit,
                                   hetpu::WhenRunning::Forward);
    } catch (const std::exception &e) {  // never unwind into a C program
        std::fprintf(stderr, "hetpu-preload: %s while starting StarPU\n", e.what());
        return -ENOMEM;
    }
}

extern "C" __attribute__((visibility("default"))) int starpu_init(struct starpu_conf *conf)
{
    return starpu_initialize(conf, nullptr, nullptr);
}

extern "C" __attribute__((visibility("default"))) void starpu_shutdown(void)
{
    using Fn = void (*)(void);
    static Fn fn = real_symbol<Fn>("starpu_shutdown");
    fn();
    hetpu::note_starpu_shutdown();
}
