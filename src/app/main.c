/* SPDX-License-Identifier: MIT */
/* The shoal program: dispatches to the subcommands. With no arguments it runs the
 * default scene (in a window when there is a display; see cmd_run). */
#include "app/app.h"
#include "app/options.h"
#include "shoal/system.h"
#include "mpi_app.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help;
} command;

static const command commands[] = {
    {"init", cmd_init, "write a model's initial state (.npy)"},
    {"step", cmd_step, "advance a state file by K steps"},
    {"run", cmd_run, "the interactive program: a school of fish in a window (or headless)"},
    {"compare", cmd_compare, "compare two state files: identical boids, errors, flock statistics"},
    {"diverge", cmd_diverge, "run two backends or orders from one state, errors per step to CSV"},
    {"sweep", cmd_sweep, "an ensemble over a parameter grid and seeds: flock statistics to CSV"},
    {"verify", cmd_verify,
     "check another program's trajectory step by step: agrees, drift, threshold tie or which rule"},
    {"bench", cmd_bench, "the benchmark matrix: sim and render timings, JSON, comparisons"},
    {"render", cmd_render, "render a state file to PNG with the software rasterizer"},
    {"params", cmd_params, "every model's parameters: meaning, unit, default, range"},
};

static void usage(FILE *f)
{
    fprintf(f, "shoal %s: boids on CPU cores\n\nusage: shoal COMMAND [options]\n\ncommands:\n",
            SHOAL_VERSION_STRING);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\n'shoal COMMAND --help' lists a command's options with their defaults.\n");
}

/* How busy the CPUs are now: the mean, over 5 samples 1 ms apart, of the runnable threads
 * in /proc/loadavg (its 4th field, R/T), less this one. Not the load average: that counts
 * shoal's own runs of the last minutes, so back-to-back runs would see themselves. -1 when
 * it cannot be read. */
static double others_runnable(void)
{
    double sum = 0;
    for (int i = 0; i < 5; i++) {
        FILE *f = fopen("/proc/loadavg", "r");
        if (!f)
            return -1;
        int running = 0;
        int ok = fscanf(f, "%*f %*f %*f %d/", &running) == 1;
        fclose(f);
        if (!ok)
            return -1;
        sum += running > 1 ? running - 1 : 0;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return sum / 5;
}

/* OpenMP wait policy. Threads that spin at a barrier burn the time slice a preempted
 * worker needs: on CPUs busy with other work, libgomp's default (spin about 3 ms, then
 * sleep) and active are 1.5-3x slower than passive and far noisier; on idle CPUs spinning
 * wins, up to 4.4x for a small step on 16 cores (docs/BENCH.md). So, when the user has set
 * neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT, the program looks at how many other threads
 * are runnable: at least half the CPUs' worth -> passive, else libgomp's default. libgomp
 * reads the policy when it is loaded, before main, so for passive the program sets it and
 * runs itself again once (if that fails it goes on). The choice and why is in
 * SHOAL_OMP_DEFAULT ("passive: R other runnable threads on N CPUs" or "libgomp: ..."),
 * which shoal bench records. All this only on GNU libgomp: on LLVM's libomp (the default
 * runtime where it is installed) the library applies its wait policy at run time and
 * follows the load as it changes (shoal/system.h), so the program decides nothing. */
static void default_wait_policy(char **argv)
{
    if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT"))
        return;
    /* LLVM's libomp: the library chooses at run time (shoal_system_set_wait_policy's auto
     * policy, sampled as the run goes), so nothing is decided here */
    if (strcmp(shoal_system_openmp_runtime(), "gnu") != 0)
        return;
    double others = others_runnable();
    int cpus = shoal_system_cpu_count();
    int passive = others >= 0.5 * cpus;
    char why[128];
    snprintf(why, sizeof why, "%s: %.1f other runnable threads on %d CPUs",
             passive ? "passive" : "libgomp", others, cpus);
    if (setenv("SHOAL_OMP_DEFAULT", why, 1) != 0 || !passive)
        return;
    if (setenv("OMP_WAIT_POLICY", "passive", 0) != 0)
        return;
    execv("/proc/self/exe", argv);
}

/* Commands that run over MPI ranks; under mpirun with more than one rank the others
 * would each do the whole work and write the same files, so they refuse. */
static int runs_over_mpi(const char *name)
{
    return strcmp(name, "init") == 0 || strcmp(name, "step") == 0 || strcmp(name, "render") == 0 ||
           strcmp(name, "run") == 0 || strcmp(name, "sweep") == 0;
}

static int is_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(name, commands[i].name) == 0)
            return 1;
    return 0;
}

static int dispatch(int argc, char **argv);

int main(int argc, char **argv)
{
    default_wait_policy(argv); /* may run the program again: before MPI starts */
    app_signals_install();
    int rc = mpi_start(&argc, &argv);
    if (rc)
        return rc;
    options_quiet = mpi_rank() != 0;
    const char *cmd = argc >= 2 ? argv[1] : "run";
    if (mpi_size() > 1) {
        /* rank 0 speaks for all (every failure is agreed first): what the others would print
         * on stdout (help, version, reports) is rank 0's again */
        if (mpi_rank() != 0 && !freopen("/dev/null", "w", stdout))
            fclose(stdout);
        shoal_error e;
        if (mpi_same_args(argc, argv, &e)) {
            if (mpi_rank() == 0)
                options_error(cmd[0] == '-' ? NULL : cmd, "%s", e.message);
            mpi_stop();
            return 2;
        }
        if (cmd[0] != '-' && strcmp(cmd, "help") != 0 && !runs_over_mpi(cmd)) {
            if (mpi_rank() == 0 && !is_command(cmd))
                options_error(NULL, "unknown command '%s' (see shoal --help)", cmd);
            else if (mpi_rank() == 0)
                fprintf(stderr,
                        "shoal %s: does not run over MPI ranks (%d ranks): run it alone, or use "
                        "init, step, render, sweep or run --headless under mpirun\n",
                        cmd, mpi_size());
            mpi_stop();
            return 2;
        }
    }
    rc = dispatch(argc, argv);
    /* every report on stdout must have been written whole (a full disk, /dev/full, a closed
     * stdout): a command whose report was lost has failed (exit 2), as for any output */
    if (rc == 0 && app_stdout_check(cmd))
        rc = 2;
    mpi_stop();
    return rc;
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        char *run_argv[] = {"run", NULL};
        return cmd_run(1, run_argv);
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("shoal %s\n", SHOAL_VERSION_STRING);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    options_error(NULL, "unknown command '%s' (see shoal --help)", argv[1]);
    return 2;
}
