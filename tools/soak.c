/* SPDX-License-Identifier: MIT */
/* soak: run a simulation for many steps and watch it. Every M steps it checks that every
 * value is finite, how far the boids are outside the walls (the model's box, or fov's
 * boundary sphere), the largest speed, and the process's memory (VmRSS and VmHWM from
 * /proc/self/status), printing one line per check and a summary. A benchmark, not a test:
 * run it by hand (docs/ROBUSTNESS.md lists the commands and the results).
 *
 *   soak [--scene F.ini | --model M] [--count N] [--steps K] [--every M] [--print P]
 *        [--threads T] [--seed S] [--box SIDE [--density D]] [--set name=value ...]
 *        [--margin X]
 *
 * Every M steps (default 100) the state is checked; a line is printed every P steps
 * (default M) with the worst values seen since the last line, and the time per step
 * without the checks.
 * --box SIDE draws N boids uniformly in a cube of that side centred on 0 (velocities
 * uniform in a ball of radius max_speed / 2) and sets the model's walls to the cube;
 * --density D then gives N = D * SIDE^3. Without --box the model's own initial state is
 * used. Exit status: 0 ok; 1 a non-finite value (the step fault message is printed) or a
 * boid further than --margin outside the walls; 2 bad arguments. */
#include "shoal/shoal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* VmRSS and VmHWM in KiB (0 when /proc is not there). */
static void memory_kib(long *rss, long *hwm)
{
    *rss = *hwm = 0;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        sscanf(line, "VmRSS: %ld", rss);
        sscanf(line, "VmHWM: %ld", hwm);
    }
    fclose(f);
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static float uniform(uint64_t *s, float lo, float hi)
{
    return lo + (hi - lo) * (float)((double)(splitmix(s) >> 11) * 0x1.0p-53);
}

/* How far outside its walls a position is (0 inside), by the model's own boundary. */
typedef struct walls {
    int sphere; /* fov: a sphere of radius r around c */
    float lo[3], hi[3], c[3], r;
} walls;

static walls model_walls(const shoal_sim_desc *d)
{
    const shoal_params *p = &d->params;
    walls w;
    memset(&w, 0, sizeof w);
    for (int k = 0; k < 3; k++) {
        switch (d->model) {
        case SHOAL_MODEL_HEADING:
            w.lo[k] = p->bounds_center[k] - 0.5f * p->bounds_size[k];
            w.hi[k] = p->bounds_center[k] + 0.5f * p->bounds_size[k];
            break;
        case SHOAL_MODEL_CLASSIC:
            w.lo[k] = p->box_min[k];
            w.hi[k] = p->box_max[k];
            break;
        case SHOAL_MODEL_FOV:
            w.sphere = 1;
            w.c[k] = p->boundary_center[k];
            w.r = sqrtf(p->boundary_range2);
            break;
        default:
            w.lo[k] = p->wall_center[k] - 0.5f * p->wall_size[k];
            w.hi[k] = p->wall_center[k] + 0.5f * p->wall_size[k];
            break;
        }
    }
    return w;
}

static double outside(const walls *w, const float *row)
{
    if (w->sphere) {
        double d2 = 0;
        for (int k = 0; k < 3; k++)
            d2 += ((double)row[k] - w->c[k]) * ((double)row[k] - w->c[k]);
        double d = sqrt(d2) - w->r;
        return d > 0 ? d : 0;
    }
    double m = 0;
    for (int k = 0; k < 3; k++) {
        double below = (double)w->lo[k] - row[k], above = (double)row[k] - w->hi[k];
        if (below > m)
            m = below;
        if (above > m)
            m = above;
    }
    return m;
}

static int usage(void)
{
    fprintf(stderr, "usage: soak [--scene F.ini | --model M] [--count N] [--steps K] [--every M]\n"
                    "            [--print P] [--threads T] [--seed S] [--box SIDE [--density D]]\n"
                    "            [--set name=value ...] [--margin X]\n");
    return 2;
}

int main(int argc, char **argv)
{
    shoal_sim_desc d = shoal_sim_desc_default();
    shoal_error e;
    long long count = -1, steps = 1000, every = 100, print_every = 0, threads = 0, seed = 1;
    double box = 0, density = 0, margin = INFINITY;
    const char *sets[64];
    int set_count = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            return usage();
        i++;
        if (strcmp(a, "--scene") == 0) {
            shoal_scene sc;
            if (shoal_scene_load(v, &sc, &e)) {
                fprintf(stderr, "soak: %s\n", e.message);
                return 2;
            }
            d = sc.desc;
        } else if (strcmp(a, "--model") == 0) {
            if (shoal_model_parse(v, &d.model, &e)) {
                fprintf(stderr, "soak: %s\n", e.message);
                return 2;
            }
            shoal_params_default(d.model, &d.params);
            d.boid_count = shoal_model_default_count(d.model);
        } else if (strcmp(a, "--count") == 0) {
            count = atoll(v);
        } else if (strcmp(a, "--steps") == 0) {
            steps = atoll(v);
        } else if (strcmp(a, "--every") == 0) {
            every = atoll(v);
        } else if (strcmp(a, "--print") == 0) {
            print_every = atoll(v);
        } else if (strcmp(a, "--threads") == 0) {
            threads = atoll(v);
        } else if (strcmp(a, "--seed") == 0) {
            seed = atoll(v);
        } else if (strcmp(a, "--box") == 0) {
            box = atof(v);
        } else if (strcmp(a, "--density") == 0) {
            density = atof(v);
        } else if (strcmp(a, "--margin") == 0) {
            margin = atof(v);
        } else if (strcmp(a, "--set") == 0 && set_count < 64) {
            sets[set_count++] = v;
        } else {
            return usage();
        }
    }
    if (steps < 1 || every < 1 || print_every < 0 || box < 0 || density < 0)
        return usage();
    if (print_every < every)
        print_every = every;
    if (box > 0) {
        char val[64];
        snprintf(val, sizeof val, "%.9g,%.9g,%.9g", box, box, box);
        const char *name = d.model == SHOAL_MODEL_HEADING ? "bounds_size" : "wall_size";
        if (d.model == SHOAL_MODEL_CLASSIC || d.model == SHOAL_MODEL_FOV) {
            fprintf(stderr, "soak: --box sets the walls of steer, average and heading only\n");
            return 2;
        }
        if (shoal_params_set(d.model, &d.params, name, val, &e)) {
            fprintf(stderr, "soak: %s\n", e.message);
            return 2;
        }
        if (density > 0)
            count = (long long)(density * box * box * box);
    }
    for (int i = 0; i < set_count; i++) {
        char name[128];
        const char *eq = strchr(sets[i], '=');
        if (!eq || (size_t)(eq - sets[i]) >= sizeof name)
            return usage();
        memcpy(name, sets[i], (size_t)(eq - sets[i]));
        name[eq - sets[i]] = 0;
        if (shoal_params_set(d.model, &d.params, name, eq + 1, &e)) {
            fprintf(stderr, "soak: %s\n", e.message);
            return 2;
        }
    }
    if (count > 0)
        d.boid_count = (size_t)count;
    d.seed = (uint64_t)seed;
    d.thread_count = (int)threads;

    long rss0, hwm0;
    memory_kib(&rss0, &hwm0);
    shoal_sim *sim;
    if (shoal_sim_create(&d, &sim, &e)) {
        fprintf(stderr, "soak: %s\n", e.message);
        return 2;
    }
    size_t n = d.boid_count;
    float *rows = malloc(n * 6 * sizeof(float));
    if (!rows) {
        fprintf(stderr, "soak: out of memory for %zu rows\n", n);
        return 2;
    }
    if (box > 0) {
        uint64_t s = (uint64_t)seed * 0x2545F4914F6CDD1Dull + 1;
        float h = (float)(0.5 * box), vmax = 0.5f * d.params.max_speed;
        if (d.model == SHOAL_MODEL_HEADING)
            vmax = d.params.move_speed;
        for (size_t i = 0; i < n; i++) {
            float *r = rows + 6 * i;
            for (int k = 0; k < 3; k++)
                r[k] = uniform(&s, -h, h);
            do {
                for (int k = 3; k < 6; k++)
                    r[k] = uniform(&s, -1, 1);
            } while (r[3] * r[3] + r[4] * r[4] + r[5] * r[5] > 1);
            for (int k = 3; k < 6; k++)
                r[k] *= vmax;
        }
        if (shoal_sim_set_rows(sim, rows, n, &e)) {
            fprintf(stderr, "soak: %s\n", e.message);
            return 2;
        }
    } else if (shoal_sim_draw_state(sim, &e)) {
        fprintf(stderr, "soak: %s\n", e.message);
        return 2;
    }
    walls w = model_walls(&d);
    printf("soak: model %s, %zu boids, %lld steps, check every %lld, dt %g s, isa %s, "
           "walls %s [%g %g %g]..[%g %g %g]\n",
           shoal_model_name(d.model), n, steps, every, d.dt_s, shoal_sim_isa_name(sim),
           w.sphere ? "sphere" : "box", (double)w.lo[0], (double)w.lo[1], (double)w.lo[2],
           (double)w.hi[0], (double)w.hi[1], (double)w.hi[2]);
    printf("%10s %10s %10s %12s %12s %10s %12s %12s\n", "step", "time s", "ms/step", "nonfinite",
           "max outside", "max speed", "VmRSS KiB", "VmHWM KiB");
    fflush(stdout);

    double t_start = now_s(), worst = 0, worst_speed = 0, step_time = 0, line_time = 0;
    double line_out = 0, line_speed = 0;
    size_t line_nonfinite = 0;
    long rss_first = 0, rss_last = 0, rss_max = 0, hwm = 0;
    long long worst_step = 0, done = 0, line_steps = 0;
    int rc = 0;
    while (done < steps) {
        long long k = steps - done < every ? steps - done : every;
        double t0 = now_s();
        shoal_status st = shoal_sim_step(sim, (int)k, &e);
        double dt_steps = now_s() - t0;
        step_time += dt_steps;
        line_time += dt_steps;
        if (st) {
            printf("FAULT after step %lld: %s\n", done, e.message);
            rc = 1;
            break;
        }
        done += k;
        line_steps += k;
        if (shoal_sim_get_rows(sim, rows, n, &e)) {
            printf("FAULT after step %lld: %s\n", done, e.message);
            rc = 1;
            break;
        }
        size_t nonfinite = 0;
        double out = 0, speed = 0;
        for (size_t i = 0; i < n; i++) {
            const float *r = rows + 6 * i;
            for (int c = 0; c < 6; c++)
                nonfinite += !isfinite(r[c]);
            double o = outside(&w, r);
            if (o > out)
                out = o;
            double s2 = (double)r[3] * r[3] + (double)r[4] * r[4] + (double)r[5] * r[5];
            if (s2 > speed)
                speed = s2;
        }
        speed = sqrt(speed);
        if (out > worst) {
            worst = out;
            worst_step = done;
        }
        if (speed > worst_speed)
            worst_speed = speed;
        if (out > line_out)
            line_out = out;
        if (speed > line_speed)
            line_speed = speed;
        line_nonfinite += nonfinite;
        if (nonfinite)
            rc = 1;
        if (done % print_every == 0 || done == steps || rc) {
            long rss;
            memory_kib(&rss, &hwm);
            if (!rss_first)
                rss_first = rss;
            rss_last = rss;
            if (rss > rss_max)
                rss_max = rss;
            printf("%10lld %10.1f %10.3f %12zu %12.4f %10.4f %12ld %12ld\n", done,
                   now_s() - t_start, 1e3 * line_time / (double)line_steps, line_nonfinite,
                   line_out, line_speed, rss, hwm);
            fflush(stdout);
            line_time = line_out = line_speed = 0;
            line_steps = 0;
            line_nonfinite = 0;
        }
    }
    double total = now_s() - t_start;
    printf("summary: %lld of %lld steps in %.1f s (%.3f ms/step, checks excluded); %s; max "
           "outside the walls %.4f (step %lld, checked every %lld steps)%s; max speed %.4f; "
           "VmRSS first line %ld KiB, last %ld KiB (%+ld), max %ld; VmHWM %ld KiB (before "
           "create %ld)\n",
           done, steps, total, 1e3 * step_time / (double)(done ? done : 1),
           rc ? "FAILED: non-finite values" : "no non-finite values", worst, worst_step, every,
           worst > margin ? " EXCEEDS --margin" : "", worst_speed, rss_first, rss_last,
           rss_last - rss_first, rss_max, hwm, rss0);
    if (worst > margin)
        rc = 1;
    free(rows);
    shoal_sim_destroy(sim);
    return rc;
}
