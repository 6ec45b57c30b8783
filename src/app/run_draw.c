/* SPDX-License-Identifier: MIT */
/* `shoal run`: drawing one frame. The instances (positions extrapolated to the display time,
 * predators appended, grid-view colour groups; under MPI this rank's own fish and the depth
 * composite), the renderer's call, then the overlays on its image: obstacles, targets,
 * predators' radii, the grid view, trails, HUD, help and status line. Reads the app state and
 * writes only its draw buffers, grid-view results and trails. */
#include "app/app.h"
#include "app/run_app.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- grid view and trails -------------------------------------------------------------- */

static float extrapolation_scale(const app *a)
{
    /* velocities in units per step (fov: its seed adds v to p with no dt) or per second */
    return shoal_model_get_info(a->desc.model)->speed_per_step ? 1.0f : (float)a->desc.dt_s;
}

/* Grid view: colour groups for every instance (view order) and the picked boid's cell. */
static void grid_groups(app *a, const shoal_boid_view *v, const float *px, const float *py,
                        const float *pz, const float pick[3])
{
    float origin[3], cell;
    int32_t dims[3];
    shoal_sim_grid_info(a->sim, origin, &cell, dims);
    float r = shoal_params_interaction_radius(a->desc.model, &a->desc.params);
    float r2 = r * r;
    int32_t c[3];
    for (int k = 0; k < 3; k++) {
        float q = isfinite(cell) && cell > 0 ? floorf((pick[k] - origin[k]) / cell) : 0;
        int32_t ci = q < 0 ? 0 : q >= (float)dims[k] ? dims[k] - 1 : (int32_t)q;
        c[k] = ci;
    }
    memcpy(a->grid_cell, c, sizeof c);
    size_t cand = 0, nb = 0;
    for (size_t i = 0; i < v->count; i++) {
        float p[3] = {v->px[i], v->py[i], v->pz[i]};
        int in = 1;
        for (int k = 0; k < 3 && in; k++) {
            float q = isfinite(cell) && cell > 0 ? floorf((p[k] - origin[k]) / cell) : 0;
            int32_t ci = q < 0 ? 0 : q >= (float)dims[k] ? dims[k] - 1 : (int32_t)q;
            in = ci >= c[k] - 1 && ci <= c[k] + 1;
        }
        uint8_t g = 5; /* silver: the rest of the school */
        if ((long long)v->row_of[i] == a->picked_row) {
            g = 0; /* orange: the picked boid */
        } else if (in) {
            cand++;
            float d[3] = {p[0] - pick[0], p[1] - pick[1], p[2] - pick[2]};
            if (v3_dot(d, d) <= r2) {
                g = 3; /* green: neighbours within the interaction radius */
                nb++;
            } else {
                g = 1; /* blue: in the 27 cells but farther than the radius */
            }
        }
        a->group[i] = g;
    }
    (void)px, (void)py, (void)pz;
    a->grid_candidates = cand;
    a->grid_neighbors = nb;
}

/* The picked boid's index in the view, or (size_t)-1. */
size_t run_view_index_of_row(const shoal_boid_view *v, long long row)
{
    if (row < 0)
        return (size_t)-1;
    for (size_t i = 0; i < v->count; i++)
        if ((long long)v->row_of[i] == row)
            return i;
    return (size_t)-1;
}

static void draw_grid_overlay(app *a, canvas *cv, const proj *p, const float pick[3],
                              const shoal_boid_view *v, const float *px, const float *py,
                              const float *pz)
{
    float origin[3], cell;
    int32_t dims[3];
    shoal_sim_grid_info(a->sim, origin, &cell, dims);
    if (isfinite(cell) && cell > 0) {
        int32_t lo[3], hi[3];
        for (int k = 0; k < 3; k++) {
            lo[k] = a->grid_cell[k] - 1 < 0 ? 0 : a->grid_cell[k] - 1;
            hi[k] = a->grid_cell[k] + 2 > dims[k] ? dims[k] : a->grid_cell[k] + 2;
        }
        /* the lattice of the (up to) 3x3x3 block: lines along each axis */
        for (int ax = 0; ax < 3; ax++) {
            int b1 = (ax + 1) % 3, b2 = (ax + 2) % 3;
            for (int i = lo[b1]; i <= hi[b1]; i++) {
                for (int j = lo[b2]; j <= hi[b2]; j++) {
                    float s[3], e[3];
                    s[ax] = origin[ax] + (float)lo[ax] * cell;
                    e[ax] = origin[ax] + (float)hi[ax] * cell;
                    s[b1] = e[b1] = origin[b1] + (float)i * cell;
                    s[b2] = e[b2] = origin[b2] + (float)j * cell;
                    int outer = (i == lo[b1] || i == hi[b1]) && (j == lo[b2] || j == hi[b2]);
                    line3d(cv, p, s, e, outer ? 0xFFFFFF : 0xB8E8FF, outer ? 230 : 110);
                }
            }
        }
    }
    /* links from the picked boid to its neighbours */
    for (size_t i = 0; i < v->count; i++) {
        if (a->group[i] != 3)
            continue;
        float q[3] = {px[i], py[i], pz[i]};
        line3d(cv, p, pick, q, 0x90FFA0, 120);
    }
    /* a ring around the picked boid, so it can be found among its neighbours */
    float sx, sy;
    if (proj_point(p, pick, &sx, &sy)) {
        for (int k = 0; k < 24; k++) {
            float t0 = (float)k * 6.2831853f / 24, t1 = (float)(k + 1) * 6.2831853f / 24;
            for (int r = 9; r <= 10; r++)
                line2d(cv, sx + r * cosf(t0), sy + r * sinf(t0), sx + r * cosf(t1),
                       sy + r * sinf(t1), 0xFF9040, 255);
        }
    }
}

static void trails_sample(app *a, const shoal_boid_view *v, const float *px, const float *py,
                          const float *pz)
{
    int head = a->trail_head;
    size_t stride = a->trail_stride;
    for (size_t i = 0; i < v->count; i++) {
        uint32_t row = v->row_of[i];
        if (row % stride)
            continue;
        size_t t = row / stride;
        if (t >= TRAIL_BOIDS)
            continue;
        float *dst = a->trail + (t * TRAIL_LEN + (size_t)head) * 3;
        dst[0] = px[i];
        dst[1] = py[i];
        dst[2] = pz[i];
    }
    a->trail_head = (head + 1) % TRAIL_LEN;
    if (a->trail_fill < TRAIL_LEN)
        a->trail_fill++;
}

static void trails_draw(app *a, canvas *cv, const proj *p)
{
    size_t nt = shoal_sim_count(a->sim) / a->trail_stride;
    if (nt > TRAIL_BOIDS)
        nt = TRAIL_BOIDS;
    int n = a->trail_fill;
    for (size_t t = 0; t < nt; t++) {
        const float *base = a->trail + t * TRAIL_LEN * 3;
        for (int k = 1; k < n; k++) {
            int i0 = (a->trail_head - n + k - 1 + 2 * TRAIL_LEN) % TRAIL_LEN;
            int i1 = (i0 + 1) % TRAIL_LEN;
            unsigned alpha = (unsigned)(30 + 190 * k / n);
            line3d(cv, p, base + i0 * 3, base + i1 * 3, 0xC8F4FF, alpha);
        }
    }
}

/* ---- HUD and help ---------------------------------------------------------------------- */

static void hud_text_block(app *a, canvas *cv, int x, int y, const char *text, uint32_t color,
                           int panel)
{
    if (!a->font || !a->winfo.char_w)
        return;
    int lines = 1, cols = 0, c = 0;
    for (const char *s = text; *s; s++) {
        if (*s == '\n') {
            lines++;
            c = 0;
        } else if (++c > cols) {
            cols = c;
        }
    }
    if (panel)
        fill_rect(cv, x - 8, y - 6, cols * a->winfo.char_w + 16, lines * a->winfo.char_h + 12,
                  0x04101C, 150);
    font_draw_text(a->font, cv->px, cv->w, cv->h, cv->stride, x + 1, y + 1, text, 0xC0000000u);
    font_draw_text(a->font, cv->px, cv->w, cv->h, cv->stride, x, y, text, color);
}

static void draw_hud(app *a, canvas *cv)
{
    char buf[2048];
    size_t len = 0;
#define OUT(...)                                                                                   \
    do {                                                                                           \
        if (len < sizeof buf)                                                                      \
            len += (size_t)snprintf(buf + len, sizeof buf - len, __VA_ARGS__);                     \
    } while (0)
    const timings *h = &a->hud_t;
    double fr = h->frames ? (double)h->frames : 1.0;
    double steps = h->steps ? (double)h->steps : 1.0;
    const char *isa_s = a->gpu ? "cuda" : shoal_sim_isa_name(a->sim),
               *isa_r = a->rstats.isa ? a->rstats.isa : "-";
    const shoal_param_info *plist[RUN_EDITABLE_COUNT];
    int pn = run_params_editable(a->desc.model, plist);
    /* headless, the frame is handed to the writer where a window presents it */
    const char *show = a->win ? "present" : "output";
    double show_ms = (a->win ? h->ms[T_PRESENT] : h->ms[T_OUTPUT]) / fr;
    if (cv->w < 100 * a->winfo.char_w) {
        /* a small window: the few numbers that matter */
        OUT("%.1f fps  %.1f ms  N %zu  %s%s\n", a->hud_fps, h->ms[T_FRAME] / fr,
            shoal_sim_count(a->sim), shoal_model_name(a->desc.model), a->paused ? "  PAUSED" : "");
        OUT("sim %.1f  render %.1f  %s %.1f ms\n", h->ms[T_SIM] / fr, h->ms[T_RENDER] / fr, show,
            show_ms);
        if (pn) {
            const shoal_param_info *p = plist[a->param_index % pn];
            OUT("%s = %.4g\n", p->name, (double)run_param_value(&a->desc.params, p));
        }
        OUT("%d thr %s  h: help", run_thread_count(a), isa_r);
        hud_text_block(a, cv, 10, 8, buf, 0xFFE8F4FF, 1);
        return;
    }
    OUT("shoal %6.1f fps (%.2f ms)   N %zu   model %s   %dx%d\n", a->hud_fps, h->ms[T_FRAME] / fr,
        shoal_sim_count(a->sim), shoal_model_name(a->desc.model), cv->w, cv->h);
    if (strcmp(isa_s, isa_r) == 0)
        OUT("threads %d   ISA %s   ", run_thread_count(a), isa_s);
    else
        OUT("threads %d   ISA sim %s, render %s   ", run_thread_count(a), isa_s, isa_r);
    if (a->win)
        OUT("%s%s\n", a->winfo.present_path ? a->winfo.present_path : "-",
            a->cfg.vsync ? (a->winfo.vsync ? ", vsync" : ", paced") : ", vsync off");
    else /* headless: the frames go to files, as fast as they are made */
        OUT("%s, %d steps a frame\n", a->winfo.present_path ? a->winfo.present_path : "headless",
            a->cfg.steps_per_frame > 0 ? a->cfg.steps_per_frame : 1);
    OUT("sim     %6.2f ms/step x%.2f:", h->ms[T_SIM] / steps, (double)h->steps / fr);
    shoal_stage_stats st[SIM_STAGES];
    size_t ns = shoal_sim_get_stats(a->sim, st, SIM_STAGES);
    for (size_t k = 0; k < ns && k < SIM_STAGES; k++) {
        const char *nm = strncmp(st[k].name, "grid_", 5) == 0 ? st[k].name + 5 : st[k].name;
        OUT(" %s %.2f", nm, a->hud_stage_ms[k]);
    }
    OUT("\n");
    OUT("render  %6.2f ms: instance %.2f setup %.2f raster %.2f resolve %.2f\n",
        h->ms[T_RENDER] / fr, h->ms[T_INSTANCE] / fr, h->ms[T_SETUP] / fr, h->ms[T_RASTER] / fr,
        h->ms[T_RESOLVE] / fr);
    OUT("%-7s %6.2f ms   HUD %.2f ms   drawn %llu: %llu full %llu reduced %llu coarse %llu "
        "splat\n",
        show, show_ms, h->ms[T_OVERLAY] / fr, (unsigned long long)a->rstats.instances_visible,
        (unsigned long long)a->rstats.instances_full,
        (unsigned long long)a->rstats.instances_reduced,
        (unsigned long long)a->rstats.instances_coarse,
        (unsigned long long)a->rstats.instances_splat);
    const shoal_param_info *list[RUN_EDITABLE_COUNT];
    int np = run_params_editable(a->desc.model, list);
    if (np) {
        const shoal_param_info *p = list[a->param_index % np];
        OUT("param   < %s = %.4g >  %d/%d  (Up/Down: select, Left/Right: change)\n", p->name,
            (double)run_param_value(&a->desc.params, p), a->param_index % np + 1, np);
    }
    OUT("t %.1f s  speed %gx%s  LOD %s  grid %s  trails %s  follow %s   h: help", run_sim_time(a),
        a->speed, a->paused ? "  PAUSED" : "", run_onoff(a->rdesc.lod), run_onoff(a->grid),
        run_onoff(a->trails), run_onoff(a->follow));
    if (a->grid && a->picked_row >= 0)
        OUT("\ngrid    boid %lld, cell (%d, %d, %d): %zu in its 27 cells, %zu within r = %.3g",
            a->picked_row, a->grid_cell[0], a->grid_cell[1], a->grid_cell[2], a->grid_candidates,
            a->grid_neighbors,
            (double)shoal_params_interaction_radius(a->desc.model, &a->desc.params));
#undef OUT
    hud_text_block(a, cv, 14, 12, buf, 0xFFE8F4FF, 1);
}

/* The help, around the line of the model keys (help_models: from the library's table). */
static const char *help_head = "shoal: keys and mouse\n"
                               "\n"
                               "  Esc, q          quit\n"
                               "  Space           pause / resume        .  single step\n"
                               "  [  ]            slower / faster       0  normal speed\n";
static const char *help_text =
    "  PgUp  PgDn      twice / half the fish (new school)   r  new seed\n"
    "  Up  Down        select a rule parameter (Tab too)\n"
    "  Left Right - +  change it (10%)       Backspace  back to the scene's value\n"
    "  i, F3           HUD on / off          l  level of detail on / off\n"
    "  g               grid view: picked boid (orange), its 27 cells, neighbours\n"
    "                  (green) and the rest of its cells (blue); right click picks\n"
    "  t               trails                f  camera follows the school (or the pick)\n"
    "  p, F12          screenshot (PNG)      c, Home  reset the camera\n"
    "  h, F1           this help\n"
    "\n"
    "  m  shift+m      move the obstacle mesh +x / -x (field rebuilt)   n  turn it 15 deg\n"
    "\n"
    "  mouse           left drag: orbit    right/middle or shift+left drag: pan\n"
    "                  wheel: zoom         right click: pick a boid for the grid view\n"
    "  heading         left drag a target marker (yellow) to move it; ctrl+left click\n"
    "                  (or k, then left click) places the next target there, on the\n"
    "                  plane through the school facing the camera";

/* "  1 2 3 4 5       model: steer average ... (resets to its scene)\n": the keys 1-9 pick
 * the models of the table in enum order (run_input.c). Returns the length written. */
static size_t help_models(char *out, size_t size)
{
    char keys[32] = "";
    size_t k = 0;
    for (int m = 0; m < SHOAL_MODEL_COUNT && m < 9 && k + 3 < sizeof keys; m++)
        k += (size_t)snprintf(keys + k, sizeof keys - k, "%s%d", m ? " " : "", m + 1);
    int w = snprintf(out, size, "  %-15s model:", keys);
    size_t n = w > 0 && (size_t)w < size ? (size_t)w : 0;
    for (int m = 0; m < SHOAL_MODEL_COUNT && m < 9 && n < size; m++) {
        w = snprintf(out + n, size - n, " %s", shoal_model_name((shoal_model)m));
        n += w > 0 && (size_t)w < size - n ? (size_t)w : 0;
    }
    w = snprintf(out + n, size - n, " (resets to its scene)\n");
    n += w > 0 && (size_t)w < size - n ? (size_t)w : 0;
    return n;
}

static void draw_help(app *a, canvas *cv)
{
    if (!a->winfo.char_w)
        return;
    char text[4096];
    size_t n = (size_t)snprintf(text, sizeof text, "%s", help_head);
    n += help_models(text + n, sizeof text - n);
    snprintf(text + n, sizeof text - n, "%s", help_text);
    int cols = 0, lines = 1, c = 0;
    for (const char *s = text; *s; s++) {
        if (*s == '\n') {
            lines++;
            c = 0;
        } else if (++c > cols) {
            cols = c;
        }
    }
    int w = cols * a->winfo.char_w, h = lines * a->winfo.char_h;
    int x = (cv->w - w) / 2, y = (cv->h - h) / 2;
    if (x < 10)
        x = 10;
    if (y < 10)
        y = 10;
    fill_rect(cv, x - 16, y - 12, w + 32, h + 24, 0x020A14, 200);
    hud_text_block(a, cv, x, y, text, 0xFFFFF2D0u, 0);
}

static void draw_status(app *a, canvas *cv)
{
    if (!a->status[0] || run_now_s() > a->status_until || !a->winfo.char_w)
        return;
    int w = (int)strlen(a->status) * a->winfo.char_w;
    hud_text_block(a, cv, (cv->w - w) / 2, cv->h - a->winfo.char_h - 16, a->status, 0xFFFFE080u, 1);
}

/* ---- one frame ------------------------------------------------------------------------- */

/* The predators of the simulation that steps (the GPU's with --backend cuda: the CPU
 * mirror only holds the boids). */
static size_t app_predators(const app *a, float *pos, float *vel)
{
    if (a->gpu)
        return shoal_gpu_sim_predators(a->gpu, pos, vel, SHOAL_MAX_PREDATORS);
    return shoal_sim_predators(a->sim, pos, vel, SHOAL_MAX_PREDATORS);
}

/* Predators drawn as fish twice as long, red, after the boids (ids N + k). Fills the ex
 * buffers from the instances `in` and returns 1, or 0 when there are no predators or no
 * memory (then the boids alone are drawn). */
#define PREDATOR_SCALE 2.0f
#define PREDATOR_ARGB 0xFFE02828u
static int with_predators(app *a, shoal_render_instances *in)
{
    float pp[SHOAL_MAX_PREDATORS * 3], pv[SHOAL_MAX_PREDATORS * 3];
    size_t np = app_predators(a, pp, pv);
    if (np == 0)
        return 0;
    size_t n = in->count, total = n + np;
    if (total > a->ex_cap) {
        for (int k = 0; k < 6; k++) {
            float *q = realloc(a->ex[k], total * sizeof(float));
            if (!q)
                return 0;
            a->ex[k] = q;
        }
        uint32_t *id = realloc(a->ex_id, total * sizeof *id);
        if (id)
            a->ex_id = id;
        uint32_t *col = realloc(a->ex_color, total * sizeof *col);
        if (col)
            a->ex_color = col;
        float *sc = realloc(a->ex_scale, total * sizeof *sc);
        if (sc)
            a->ex_scale = sc;
        uint8_t *g = realloc(a->ex_group, total);
        if (g)
            a->ex_group = g;
        if (!id || !col || !sc || !g)
            return 0;
        a->ex_cap = total;
    }
    const float *src[6] = {in->px, in->py, in->pz, in->vx, in->vy, in->vz};
    for (int k = 0; k < 6; k++) {
        memcpy(a->ex[k], src[k], n * sizeof(float));
        for (size_t j = 0; j < np; j++)
            a->ex[k][n + j] = k < 3 ? pp[3 * j + (size_t)k] : pv[3 * j + (size_t)k - 3];
    }
    for (size_t i = 0; i < n; i++) {
        a->ex_id[i] = in->id ? in->id[i] : (uint32_t)i;
        a->ex_scale[i] = 1.0f;
        a->ex_color[i] = 0;
        a->ex_group[i] = in->group ? in->group[i] : 0;
    }
    /* ids after the whole school's (under MPI n is this rank's share) */
    size_t base = a->ranks > 1 ? a->desc.boid_count : n;
    for (size_t j = 0; j < np; j++) {
        a->ex_id[n + j] = (uint32_t)(base + j);
        a->ex_scale[n + j] = PREDATOR_SCALE;
        a->ex_color[n + j] = PREDATOR_ARGB;
        a->ex_group[n + j] = 0;
    }
    in->count = total;
    in->px = a->ex[0];
    in->py = a->ex[1];
    in->pz = a->ex[2];
    in->vx = a->ex[3];
    in->vy = a->ex[4];
    in->vz = a->ex[5];
    in->id = a->ex_id;
    in->scale = a->ex_scale;
    in->color = a->ex_color;
    if (in->group)
        in->group = a->ex_group;
    return 1;
}

/* Obstacles (wireframes of the meshes, circles of the spheres) and heading targets. */
static void draw_scene_overlays(app *a, canvas *cv, const proj *p)
{
    for (int k = 0; k < a->obs_count; k++)
        overlay_mesh(cv, p, &a->obs_mesh[k], &a->obs_xf[k], OVERLAY_MESH_RGB, 110);
    const shoal_params *prm = &a->desc.params;
    for (int k = 0; k < (int)prm->sphere_count; k++)
        overlay_sphere(cv, p, prm->spheres[k].center, prm->spheres[k].radius, OVERLAY_MESH_RGB, 90);
    float t[SHOAL_MAX_TARGETS * 3];
    size_t nt = shoal_sim_targets(a->sim, run_sim_time(a), t, SHOAL_MAX_TARGETS);
    for (size_t k = 0; k < nt; k++)
        overlay_target(cv, p, t + 3 * k, a->target_drag == (int)k + 1);
    /* predators: their flee radius as a red ring facing the camera */
    float pp[SHOAL_MAX_PREDATORS * 3];
    size_t np = app_predators(a, pp, NULL);
    for (size_t k = 0; k < np; k++) {
        float v[3], x, y;
        proj_view(p, pp + 3 * k, v);
        if (!proj_point(p, pp + 3 * k, &x, &y))
            continue;
        float r = prm->flee_radius * p->k / v[2];
        for (int i = 0; i < 40; i++) {
            float a0 = 6.2831853f * (float)i / 40.0f, a1 = 6.2831853f * (float)(i + 1) / 40.0f;
            line2d(cv, x + r * cosf(a0), y + r * sinf(a0), x + r * cosf(a1), y + r * sinf(a1),
                   0xFF3030u, 150);
        }
    }
}

/* Under MPI: this rank's own fish as a view (rows as ids); count SIZE_MAX: no memory. */
static shoal_boid_view local_view(app *a)
{
    shoal_boid_view v;
    memset(&v, 0, sizeof v);
    size_t n = mpi_school_local_count(a->school);
    if (n > a->loc_cap) {
        size_t cap = n + n / 4;
        for (int k = 0; k < 6; k++) {
            float *q = realloc(a->loc[k], cap * sizeof(float));
            if (!q) {
                v.count = SIZE_MAX;
                return v;
            }
            a->loc[k] = q;
        }
        uint32_t *r = realloc(a->loc_row, cap * sizeof *r);
        if (!r) {
            v.count = SIZE_MAX;
            return v;
        }
        a->loc_row = r;
        a->loc_cap = cap;
    }
    if (n)
        mpi_school_local(a->school, a->loc, a->loc_row);
    v.count = n;
    v.px = a->loc[0];
    v.py = a->loc[1];
    v.pz = a->loc[2];
    v.vx = a->loc[3];
    v.vy = a->loc[4];
    v.vz = a->loc[5];
    v.row_of = a->loc_row;
    return v;
}

void run_camera_update(app *a, double frame_s)
{
    float ease = 1.0f - expf(-(float)frame_s * 10.0f);
    a->cam.dist += (a->cam.dist_goal - a->cam.dist) * ease;
    if (!a->follow)
        return;
    shoal_boid_view v = a->ranks > 1 ? local_view(a) : shoal_sim_view(a->sim);
    if (v.count == SIZE_MAX) /* no memory for this rank's copy: the centre of none */
        v.count = 0;
    float ctr[3];
    size_t pi = a->grid ? run_view_index_of_row(&v, a->picked_row) : (size_t)-1;
    if (pi != (size_t)-1) {
        ctr[0] = v.px[pi];
        ctr[1] = v.py[pi];
        ctr[2] = v.pz[pi];
    } else {
        run_school_centre(a, &v, ctr);
    }
    float fe = 1.0f - expf(-(float)frame_s * 3.0f);
    for (int k = 0; k < 3; k++)
        a->cam.target[k] += (ctr[k] - a->cam.target[k]) * fe;
}

/* Draw the current state into `cv` (renderer image + overlays). Returns 0 or an exit code. */
int run_draw_frame(app *a, canvas *cv, int sampled_trails)
{
    shoal_error e;
    double t0 = run_now_s();
    if (cv->w != a->rdesc.width || cv->h != a->rdesc.height) {
        if (shoal_render_set_size(a->ren, cv->w, cv->h, &e)) {
            fprintf(stderr, "shoal run: %s\n", e.message);
            return app_exit_code(e.status);
        }
        a->rdesc.width = cv->w;
        a->rdesc.height = cv->h;
    }
    shoal_boid_view v = a->ranks > 1 ? local_view(a) : shoal_sim_view(a->sim);
    if (a->ranks > 1 &&
        mpi_agree(v.count == SIZE_MAX
                      ? shoal_error_set(&e, SHOAL_ERR_NOMEM, "out of memory for this rank's fish")
                      : SHOAL_OK,
                  &e)) {
        fprintf(stderr, "shoal run: %s\n", e.message);
        return 2;
    }
    const float *px = v.px, *py = v.py, *pz = v.pz;
    float alpha = a->cfg.interp && !a->cfg.steps_per_frame ? (float)(a->acc_s / a->desc.dt_s) : 0;
    if (alpha > 0 && v.count <= a->cap) {
        float k = alpha * extrapolation_scale(a);
        for (size_t i = 0; i < v.count; i++) {
            a->ipx[i] = v.px[i] + v.vx[i] * k;
            a->ipy[i] = v.py[i] + v.vy[i] * k;
            a->ipz[i] = v.pz[i] + v.vz[i] * k;
        }
        px = a->ipx;
        py = a->ipy;
        pz = a->ipz;
    }
    /* follow: ease the target toward the school's centre (or the picked boid) */
    float pick[3] = {0, 0, 0};
    size_t pi = a->grid ? run_view_index_of_row(&v, a->picked_row) : (size_t)-1;
    if (a->grid && pi == (size_t)-1) {
        run_pick_default(a);
        pi = run_view_index_of_row(&v, a->picked_row);
    }
    if (pi != (size_t)-1) {
        pick[0] = px[pi];
        pick[1] = py[pi];
        pick[2] = pz[pi];
    }
    shoal_render_instances inst;
    memset(&inst, 0, sizeof inst);
    inst.count = v.count;
    inst.px = px;
    inst.py = py;
    inst.pz = pz;
    inst.vx = v.vx;
    inst.vy = v.vy;
    inst.vz = v.vz;
    inst.id = v.row_of;
    if (a->grid && pi != (size_t)-1) {
        grid_groups(a, &v, px, py, pz, pick);
        inst.group = a->group;
    }
    if (a->trails && sampled_trails)
        trails_sample(a, &v, px, py, pz);
    with_predators(a, &inst);
    shoal_camera cam = run_orbit_camera(&a->cam);
    double t1 = run_now_s();
    /* under MPI every rank draws its own fish, rank 0 gets the image of all */
    shoal_status rst = a->ranks > 1 ? mpi_frame_draw(a->frame, a->ren, &inst, &cam, &e)
                                    : shoal_render_frame(a->ren, &inst, &cam, &e);
    if (rst) {
        fprintf(stderr, "shoal run: %s\n", e.message);
        return app_exit_code(rst);
    }
    double t2 = run_now_s();
    a->rstats = shoal_render_get_stats(a->ren);
    run_time_add(&a->win_t, T_RENDER, (t2 - t1) * 1e3);
    run_time_add(&a->win_t, T_INSTANCE, a->rstats.instance_ms);
    run_time_add(&a->win_t, T_SETUP, a->rstats.setup_ms);
    run_time_add(&a->win_t, T_RASTER, a->rstats.raster_ms);
    run_time_add(&a->win_t, T_RESOLVE, a->rstats.resolve_ms);
    if (a->ranks > 1 && mpi_rank() != 0) { /* the composite and its overlays are rank 0's */
        run_time_add(&a->win_t, T_OVERLAY, (t1 - t0) * 1e3);
        return 0;
    }
    shoal_framebuffer fb = shoal_render_framebuffer(a->ren);
    int cw = fb.width < cv->w ? fb.width : cv->w, ch = fb.height < cv->h ? fb.height : cv->h;
    for (int y = 0; y < ch; y++)
        memcpy(cv->px + (size_t)y * (size_t)cv->stride, fb.argb + (size_t)y * (size_t)fb.stride_px,
               (size_t)cw * 4);
    proj p = proj_make(&cam, cv->w, cv->h);
    draw_scene_overlays(a, cv, &p);
    if (a->trails)
        trails_draw(a, cv, &p);
    if (a->grid && pi != (size_t)-1)
        draw_grid_overlay(a, cv, &p, pick, &v, px, py, pz);
    if (a->hud && a->font) /* in the window, and headless as in the window */
        draw_hud(a, cv);
    if (a->win) {
        if (a->help)
            draw_help(a, cv);
        draw_status(a, cv);
    }
    run_time_add(&a->win_t, T_OVERLAY, (run_now_s() - t2) * 1e3 + (t1 - t0) * 1e3);
    return 0;
}
