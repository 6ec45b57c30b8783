/* SPDX-License-Identifier: MIT */
/* `shoal run`: the app state's simulation side. The clock, the status line, the orbit
 * camera and the timing windows; the lifetime of the simulation (one process, the MPI school
 * over the ranks, or the GPU with its CPU mirror), of the renderer and of the obstacle
 * meshes; each model's scene; stepping at the caller's count; the statistics (HUD numbers,
 * --stats lines, the summary). Input, drawing and output are other files' (run_app.h). */
#include "app/app.h"
#include "app/run_app.h"
#include "shoal/profile.h"
#include "shoal/system.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- clock, status line, camera, timing ------------------------------------------------ */

double run_now_s(void) { return (double)shoal_profile_now_ns() * 1e-9; }

int run_thread_count(const app *a)
{
    return a->cfg.threads > 0 ? a->cfg.threads : shoal_system_thread_count();
}

void run_orbit_from_eye(orbit *o, const float eye[3], const float target[3], float fov)
{
    float d[3];
    v3_sub(d, eye, target);
    float r = sqrtf(v3_dot(d, d));
    if (!(r > 1e-4f)) {
        d[0] = 0;
        d[1] = 0;
        d[2] = 1;
        r = 10;
    }
    memcpy(o->target, target, sizeof o->target);
    o->dist = o->dist_goal = r;
    o->pitch = asinf(fmaxf(-1.0f, fminf(1.0f, d[1] / r)));
    o->yaw = atan2f(d[0], d[2]);
    o->fov_deg = fov;
}

shoal_camera run_orbit_camera(const orbit *o)
{
    shoal_camera c = shoal_camera_default();
    float cp = cosf(o->pitch);
    c.eye[0] = o->target[0] + o->dist * cp * sinf(o->yaw);
    c.eye[1] = o->target[1] + o->dist * sinf(o->pitch);
    c.eye[2] = o->target[2] + o->dist * cp * cosf(o->yaw);
    memcpy(c.target, o->target, sizeof c.target);
    c.fov_deg = o->fov_deg;
    c.near = fmaxf(0.01f, o->dist * 0.002f);
    c.far = fmaxf(2000.0f, o->dist * 8.0f);
    return c;
}

static const char *const t_names[T_COUNT] = {"sim (shoal_sim_step)", "  render: instance",
                                             "  render: setup",      "  render: raster",
                                             "  render: resolve",    "render (shoal_render_frame)",
                                             "overlays + HUD",       "present",
                                             "output (PNG / video)", "frame (all of it)"};

void run_time_add(timings *t, int k, double ms)
{
    t->ms[k] += ms;
    t->calls[k]++;
}

volatile sig_atomic_t run_interrupted;
/* Stop after this frame; a frame (a long step) that does not end within a second is cut
 * short by the signal itself (app_signal_deadline), its temporaries removed. */
void run_on_signal(int sig)
{
    run_interrupted = 1;
    app_signal_deadline(sig);
}

void run_set_status(app *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->status, sizeof a->status, fmt, ap);
    va_end(ap);
    a->status_until = run_now_s() + 3.0;
    if (a->win == NULL || a->log_input)
        printf("shoal: %s\n", a->status);
}

/* ---- the parameters the keys edit ------------------------------------------------------ */

static const shoal_param_info *param_find(shoal_model m, const char *name)
{
    size_t n;
    const shoal_param_info *l = shoal_params_list(m, &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(l[i].name, name) == 0)
            return &l[i];
    return NULL;
}

int run_params_editable(shoal_model m, const shoal_param_info **out)
{
    const shoal_model_info *mi = shoal_model_get_info(m);
    int n = 0;
    for (size_t i = 0; mi && i < mi->live_count && n < RUN_EDITABLE_COUNT; i++) {
        const shoal_param_info *p = param_find(m, mi->live_params[i]);
        if (p)
            out[n++] = p;
    }
    return n;
}

float run_param_value(const shoal_params *p, const shoal_param_info *info)
{
    float v;
    memcpy(&v, (const char *)p + info->offset, sizeof v);
    return v;
}

void run_param_set(shoal_params *p, const shoal_param_info *info, float value)
{
    memcpy((char *)p + info->offset, &value, sizeof value);
}

/* ---- the school ------------------------------------------------------------------------ */

/* The boid nearest the camera's target (grid view's default pick). */
void run_pick_default(app *a)
{
    shoal_boid_view v = shoal_sim_view(a->sim);
    float best = INFINITY;
    for (size_t i = 0; i < v.count; i++) {
        float d[3] = {v.px[i] - a->cam.target[0], v.py[i] - a->cam.target[1],
                      v.pz[i] - a->cam.target[2]};
        float d2 = v3_dot(d, d);
        if (d2 < best) {
            best = d2;
            a->picked_row = v.row_of[i];
        }
    }
}

/* Positions are summed as integers of 2^-16 units (clamped to +-1e6, so 10^8 fish cannot
 * overflow 64 bits): the sum is exact, so the centre does not depend on the order of the
 * boids or on how the ranks split them, and the frames of a run with --follow are the same
 * bytes for any rank count. */
void run_school_centre(const app *a, const shoal_boid_view *v, float c[3])
{
    int64_t s[4] = {0, 0, 0, (int64_t)v->count};
    const float *p[3] = {v->px, v->py, v->pz};
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < v->count; i++) {
            double x = p[k][i];
            x = x < -1e6 ? -1e6 : x > 1e6 ? 1e6 : x; /* NaN: never (the sim stops first) */
            s[k] += (int64_t)llround(x * 65536.0);
        }
    if (a->ranks > 1)
        mpi_sum_i64(s, 4);
    for (int k = 0; k < 3; k++)
        c[k] = s[3] ? (float)((double)s[k] / 65536.0 / (double)s[3]) : 0.0f;
}

/* ---- sim and scene --------------------------------------------------------------------- */

/* Give the setup `count` fish (shoal_scene_set_count: walls, start region and camera scaled
 * to keep the scene's density unless keep_geometry). Returns the factor. */
double run_setup_set_count(scene_setup *s, size_t count, int keep_geometry)
{
    shoal_scene sc;
    memset(&sc, 0, sizeof sc);
    sc.desc = s->desc;
    sc.has_eye = sc.has_target = s->has_camera;
    memcpy(sc.eye, s->eye, sizeof sc.eye);
    memcpy(sc.target, s->target, sizeof sc.target);
    double f = shoal_scene_set_count(&sc, count, keep_geometry);
    s->desc = sc.desc;
    memcpy(s->eye, sc.eye, sizeof s->eye);
    memcpy(s->target, sc.target, sizeof s->target);
    return f;
}

/* A scene as run starts it, from what shoal_scene_load read. */
static void setup_from_scene(scene_setup *s, const shoal_scene *sc, const char *name)
{
    memset(s, 0, sizeof *s);
    s->desc = sc->desc;
    s->has_camera = sc->has_eye && sc->has_target;
    memcpy(s->eye, sc->eye, sizeof s->eye);
    memcpy(s->target, sc->target, sizeof s->target);
    s->fov_deg = sc->has_fov ? sc->fov_deg : 60.0f;
    s->fish_length = sc->has_fish_length ? sc->fish_length : 0.0f;
    s->follow = sc->follow;
    snprintf(s->name, sizeof s->name, "%s", name);
    s->mesh_count = sc->mesh_count;
    memcpy(s->meshes, sc->meshes, sizeof s->meshes);
}

/* The model's scene file from the assets (scenes/MODEL.ini), or, when there is none (an
 * install without the scenes), the same scene built in: the model's defaults with
 * shoal_sim_desc_for's start. A scene file that is there but cannot be loaded (out of memory,
 * say) is an error, not a silent switch to other parameters. */
shoal_status run_scene_for_model(shoal_model m, scene_setup *s, shoal_error *e)
{
    memset(s, 0, sizeof *s);
    char path[1024], name[64];
    snprintf(name, sizeof name, "scenes/%s.ini", shoal_model_name(m));
    shoal_scene sc;
    int found = shoal_io_asset_path(name, path, sizeof path);
    if (found && shoal_scene_load(path, &sc, e))
        return e->status;
    if (found && sc.desc.model == m) {
        setup_from_scene(s, &sc, path);
        return SHOAL_OK;
    }
    s->desc = shoal_sim_desc_for(m);
    s->fov_deg = 60.0f;
    snprintf(s->name, sizeof s->name, "%s defaults", shoal_model_name(m));
    return SHOAL_OK;
}

shoal_status run_scene_default(scene_setup *s, shoal_error *e)
{
    char path[1024];
    shoal_scene sc;
    if (!shoal_io_asset_path("scenes/" RUN_DEFAULT_SCENE, path, sizeof path))
        return run_scene_for_model(app_default_model(), s, e); /* an install without scenes */
    if (shoal_scene_load(path, &sc, e))
        return e->status;
    setup_from_scene(s, &sc, path);
    return SHOAL_OK;
}

static void sim_close(app *a)
{
    if (!a->sim)
        return;
    shoal_stage_stats st[SIM_STAGES];
    size_t n = shoal_sim_get_stats(a->sim, st, SIM_STAGES);
    for (size_t k = 0; k < n && k < SIM_STAGES; k++)
        a->sim_stage_ms_closed[k] += st[k].total_ms;
    a->sim_steps_closed += n ? st[0].calls : 0;
    if (a->school)
        mpi_school_destroy(a->school); /* and its part, a->sim */
    else
        shoal_sim_destroy(a->sim);
    a->school = NULL;
    a->sim = NULL;
    shoal_gpu_sim_destroy(a->gpu);
    a->gpu = NULL;
    memset(a->sim_stage_prev, 0, sizeof a->sim_stage_prev);
    a->sim_steps_prev = 0;
}

static int buffers_reserve(app *a, size_t n)
{
    if (n <= a->cap)
        return 1;
    float *x = realloc(a->ipx, n * sizeof *x), *y, *z;
    if (!x)
        return 0;
    a->ipx = x;
    if (!(y = realloc(a->ipy, n * sizeof *y)))
        return 0;
    a->ipy = y;
    if (!(z = realloc(a->ipz, n * sizeof *z)))
        return 0;
    a->ipz = z;
    uint8_t *g = realloc(a->group, n);
    if (!g)
        return 0;
    a->group = g;
    a->cap = n;
    return 1;
}

void run_trails_reset(app *a)
{
    a->trail_head = 0;
    a->trail_fill = 0;
    size_t n = a->sim ? shoal_sim_count(a->sim) : 1;
    a->trail_stride = n > TRAIL_BOIDS ? n / TRAIL_BOIDS : 1;
}

/* Simulated time of the next step, on whichever backend steps. */
double run_sim_time(const app *a)
{
    return a->gpu ? shoal_gpu_sim_time(a->gpu) : shoal_sim_time(a->sim);
}

/* --backend cuda: (re)create the GPU simulation from a->desc, starting from the state and
 * time it had (or the CPU mirror's after a new school). */
shoal_status run_gpu_open(app *a, shoal_error *e)
{
    size_t n = shoal_sim_count(a->sim);
    if (a->gpu_rows_cap < n) {
        float *r = realloc(a->gpu_rows, n * 6 * sizeof(float));
        if (!r)
            return shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for %zu fish", n);
        a->gpu_rows = r;
        a->gpu_rows_cap = n;
    }
    shoal_sim_desc d = a->desc;
    d.t0_s = run_sim_time(a);
    shoal_sim_get_state(a->sim, a->gpu_rows);
    shoal_gpu_sim *g;
    shoal_status st = shoal_gpu_sim_create(&d, a->cfg.gpu_order, &g, e);
    if (st)
        return st;
    /* the obstacle meshes: the CPU mirror's field (its own build), uploaded */
    if ((st = shoal_gpu_sim_set_state(g, a->gpu_rows, e)) ||
        (a->obs_count > 0 && (st = shoal_gpu_sim_copy_obstacles(g, a->sim, e)))) {
        shoal_gpu_sim_destroy(g);
        return st;
    }
    shoal_gpu_sim_destroy(a->gpu);
    a->gpu = g;
    return SHOAL_OK;
}

/* (Re)create the simulation from a->desc and seed it. */
shoal_status run_sim_open(app *a, shoal_error *e)
{
    sim_close(a);
    a->desc.thread_count = a->cfg.threads;
    a->desc.isa = a->cfg.isa;
    shoal_status st;
    if (a->ranks > 1) {
        /* every rank draws its own rows of the same initial state (row i from the seed and
         * i alone) and the first step sends each boid to the rank owning its cell */
        shoal_sim_desc d = a->desc;
        d.seed = a->seed;
        if ((st = mpi_school_create(&d, &a->school, e)))
            return st;
        a->sim = mpi_school_sim(a->school);
    } else {
        if ((st = shoal_sim_create(&a->desc, &a->sim, e)))
            return st;
        shoal_sim_set_profile(a->sim, a->prof);
        shoal_sim_init_state(a->sim, a->seed);
    }
    for (int k = 0; k < a->obs_count; k++) {
        st = shoal_sim_add_obstacle(a->sim, a->obs_mesh[k].positions, a->obs_mesh[k].normals,
                                    a->obs_mesh[k].vertex_count, &a->obs_xf[k], NULL, e);
        if (a->ranks > 1)
            st = mpi_agree(st, e);
        if (st) {
            sim_close(a);
            return st;
        }
    }
    a->target_drag = 0;
    if (!buffers_reserve(a, a->ranks > 1 ? 1 : a->desc.boid_count)) {
        shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for %zu fish", a->desc.boid_count);
        return SHOAL_ERR_NOMEM;
    }
    if (a->cfg.cuda) {
        shoal_status st_gpu = run_gpu_open(a, e);
        if (st_gpu)
            return st_gpu;
    }
    a->acc_s = 0;
    a->picked_row = -1;
    run_trails_reset(a);
    return SHOAL_OK;
}

shoal_status run_camera_home(app *a, shoal_error *e)
{
    shoal_camera c = shoal_camera_default();
    c.fov_deg = 60;
    float aspect = (float)a->cfg.width / (float)a->cfg.height;
    if (a->ranks > 1) {
        /* framed from the whole initial state (gathered on rank 0 once: give the scene a
         * camera to avoid it), the same camera on every rank */
        shoal_status st = mpi_school_frame(a->school, a->rdesc.fish_length, aspect, &c, e);
        if (st)
            return st;
    } else {
        shoal_boid_view v = shoal_sim_view(a->sim);
        shoal_render_camera_frame(v.px, v.py, v.pz, v.count, a->rdesc.fish_length, aspect, &c);
    }
    run_orbit_from_eye(&a->cam_home, c.eye, c.target, c.fov_deg);
    return SHOAL_OK;
}

shoal_status run_renderer_open(app *a, float fish_length, shoal_error *e)
{
    if (a->ren && a->rdesc.fish_length == fish_length)
        return SHOAL_OK;
    int w = a->rdesc.width, h = a->rdesc.height;
    a->rdesc.fish_length = fish_length;
    a->rdesc.width = w;
    a->rdesc.height = h;
    shoal_renderer *r = NULL;
    shoal_status st = app_render_create(&a->rdesc, NULL, NULL, &r, e);
    if (!st && a->ranks > 1)
        st = shoal_render_keep_depth(r, 1, e);
    if (a->ranks > 1)
        st = mpi_agree(st, e);
    if (!st && a->ranks > 1 && !a->frame)
        st = mpi_frame_create(&a->frame, e); /* agreed */
    if (st) {
        shoal_render_destroy(r);
        return st;
    }
    if (a->ren)
        shoal_render_destroy(a->ren);
    a->ren = r;
    shoal_render_set_profile(r, a->prof);
    return SHOAL_OK;
}

/* ---- stepping and statistics ----------------------------------------------------------- */

/* Step the simulation `n` times (timed). Returns 0 or an exit code. */
int run_sim_steps(app *a, int n)
{
    if (n <= 0)
        return 0;
    shoal_error e;
    double t0 = run_now_s();
    shoal_status st;
    if (a->school) {
        st = mpi_school_step(a->school, n, &e);
    } else if (a->gpu) {
        st = shoal_gpu_sim_step(a->gpu, n, &e);
        if (!st)
            st = shoal_gpu_sim_get_state(a->gpu, a->gpu_rows, &e);
        if (!st)
            st = shoal_sim_set_state(a->sim, a->gpu_rows, &e);
    } else {
        st = shoal_sim_step(a->sim, n, &e);
    }
    double ms = (run_now_s() - t0) * 1e3;
    a->win_t.ms[T_SIM] += ms;
    a->win_t.calls[T_SIM] += (uint64_t)n;
    a->win_t.steps += (uint64_t)n;
    a->steps_total += (uint64_t)n;
    if (st) {
        fprintf(stderr, "shoal run: %s\n", e.message);
        return app_exit_code(st);
    }
    return 0;
}

/* Fold the frame window into the totals and, every half second, into the HUD's numbers. */
void run_stats_roll(app *a, int force)
{
    double t = run_now_s();
    if (!force && t - a->hud_since < 0.5)
        return;
    double span = t - a->hud_since;
    a->hud_fps = span > 0 ? (double)a->win_t.frames / span : 0;
    a->hud_t = a->win_t;
    shoal_stage_stats st[SIM_STAGES];
    size_t ns = shoal_sim_get_stats(a->sim, st, SIM_STAGES);
    uint64_t calls = ns ? st[0].calls : 0;
    uint64_t dc = calls - a->sim_steps_prev;
    for (size_t k = 0; k < ns && k < SIM_STAGES; k++) {
        a->hud_stage_ms[k] = dc ? (st[k].total_ms - a->sim_stage_prev[k]) / (double)dc : 0;
        a->sim_stage_prev[k] = st[k].total_ms;
    }
    a->sim_steps_prev = calls;
    for (int k = 0; k < T_COUNT; k++) {
        a->total.ms[k] += a->win_t.ms[k];
        a->total.calls[k] += a->win_t.calls[k];
    }
    a->total.frames += a->win_t.frames;
    a->total.steps += a->win_t.steps;
    if (a->cfg.stats && a->win_t.frames) {
        double fr = (double)a->win_t.frames;
        printf("stats: %.1f fps  sim %.2f ms/frame (%llu steps)  render %.2f  overlays %.2f  "
               "present %.2f  output %.2f  frame %.2f ms\n",
               a->hud_fps, a->win_t.ms[T_SIM] / fr, (unsigned long long)a->win_t.steps,
               a->win_t.ms[T_RENDER] / fr, a->win_t.ms[T_OVERLAY] / fr, a->win_t.ms[T_PRESENT] / fr,
               a->win_t.ms[T_OUTPUT] / fr, a->win_t.ms[T_FRAME] / fr);
    }
    memset(&a->win_t, 0, sizeof a->win_t);
    a->hud_since = t;
}

void run_print_summary(app *a, const char *what)
{
    run_stats_roll(a, 1);
    double wall = run_now_s() - a->t_start;
    const timings *t = &a->total;
    double fr = t->frames ? (double)t->frames : 1;
    printf("\nshoal run: %s: %llu frames, %llu steps in %.2f s: %.1f fps (%dx%d, %zu fish, "
           "model %s, %d threads, sim %s, render %s)\n",
           what, (unsigned long long)t->frames, (unsigned long long)a->steps_total, wall,
           wall > 0 ? (double)t->frames / wall : 0.0, a->rdesc.width, a->rdesc.height,
           a->ranks > 1 ? a->desc.boid_count : shoal_sim_count(a->sim),
           shoal_model_name(a->desc.model), run_thread_count(a), shoal_sim_isa_name(a->sim),
           a->rstats.isa ? a->rstats.isa : "-");
    printf("  %-30s %10s %12s %12s\n", "stage", "calls", "total ms", "ms/frame");
    shoal_stage_stats st[SIM_STAGES];
    size_t ns = shoal_sim_get_stats(a->sim, st, SIM_STAGES);
    for (int k = 0; k < T_COUNT; k++) {
        if (!t->calls[k] && k != T_FRAME)
            continue;
        printf("  %-30s %10llu %12.2f %12.3f\n", t_names[k], (unsigned long long)t->calls[k],
               t->ms[k], t->ms[k] / fr);
        if (k == T_SIM)
            for (size_t s = 0; s < ns && s < SIM_STAGES; s++) {
                char name[64];
                snprintf(name, sizeof name, "  sim: %s", st[s].name);
                double ms = st[s].total_ms + a->sim_stage_ms_closed[s];
                printf("  %-30s %10llu %12.2f %12.3f\n", name,
                       (unsigned long long)(st[s].calls + a->sim_steps_closed), ms, ms / fr);
            }
    }
    if (a->out_busy_ms > 0) /* the writer thread's own time, beside the loop's wait for it */
        printf("  %-30s %10llu %12.2f %12.3f\n", "  writer thread (PNG, ffmpeg)",
               (unsigned long long)t->frames, a->out_busy_ms, a->out_busy_ms / fr);
    if (a->ranks > 1 && a->frame) { /* collective: every rank prints (rank 0's is seen) */
        mpi_frame_stats cs = mpi_frame_get_stats(a->frame, 1);
        printf("  %-30s %10llu %12.2f %12.3f\n", "composite (MPI, depth)",
               (unsigned long long)cs.frames, cs.total_ms, cs.total_ms / fr);
        const char *part[4] = {"  wait (imbalance)", "  encode", "  compare", "  transfer"};
        double ms[4] = {cs.wait_ms, cs.encode_ms, cs.compare_ms, cs.transfer_ms};
        for (int k = 0; k < 4; k++)
            printf("  %-30s %10llu %12.2f %12.3f\n", part[k], (unsigned long long)cs.frames, ms[k],
                   ms[k] / fr);
        printf("  composite: %.0f bytes moved per frame (all ranks), %.0f pixels drawn per "
               "frame (all ranks; slowest rank's times)\n",
               (double)cs.bytes_sent / fr, (double)cs.pixels_drawn / fr);
    }
    fflush(stdout);
}

/* ---- freeing --------------------------------------------------------------------------- */

void run_app_free(app *a)
{
    sim_close(a);
    mpi_frame_destroy(a->frame);
    if (a->ren)
        shoal_render_destroy(a->ren);
    if (a->win)
        window_close(a->win);
    font_close(a->own_font);
    free(a->ipx);
    free(a->ipy);
    free(a->ipz);
    free(a->group);
    free(a->trail);
    for (int k = 0; k < 6; k++)
        free(a->ex[k]);
    free(a->ex_id);
    for (int k = 0; k < 6; k++)
        free(a->loc[k]);
    free(a->loc_row);
    free(a->ex_color);
    free(a->ex_scale);
    free(a->ex_group);
    for (int k = 0; k < a->obs_count; k++)
        shoal_mesh_free(&a->obs_mesh[k]);
    free(a->gpu_rows);
}
