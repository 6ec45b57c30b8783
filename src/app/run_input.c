/* SPDX-License-Identifier: MIT */
/* `shoal run`: input. Keys and mouse events turned into changes of the app state (pause,
 * speed, models, school size and seed, live parameter editing, camera orbit/pan/zoom,
 * picking, heading targets, the obstacle mesh, view toggles), and the scripted input of
 * --script that drives the window for the tests. Nothing is drawn here (run_draw.c). */
#include "app/app.h"
#include "app/options.h"
#include "app/run_app.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- model, school and parameter changes ----------------------------------------------- */

/* Key 1-5: switch to a model's scene (sim, parameters, camera, fish length). */
static void switch_model(app *a, shoal_model m)
{
    scene_setup s;
    shoal_error se;
    if (run_scene_for_model(m, &s, &se)) {
        run_set_status(a, "%s", se.message);
        return;
    }
    if (a->count_override)
        run_setup_set_count(&s, a->count_override, a->keep_geometry);
    shoal_sim_desc old = a->desc;
    for (int k = 0; k < a->obs_count; k++)
        shoal_mesh_free(&a->obs_mesh[k]);
    a->obs_count = 0; /* the model scenes have no meshes */
    a->desc = s.desc;
    a->seed = s.desc.seed;
    a->scene_params = s.desc.params;
    shoal_error e;
    if (run_sim_open(a, &e)) {
        run_set_status(a, "cannot switch to %s: %s", shoal_model_name(m), e.message);
        a->desc = old;
        run_sim_open(a, &e);
        return;
    }
    float fl = s.fish_length > 0 ? s.fish_length : APP_FISH_LENGTH;
    if (run_renderer_open(a, fl, &e))
        run_set_status(a, "renderer: %s", e.message);
    if (s.has_camera)
        run_orbit_from_eye(&a->cam_home, s.eye, s.target, s.fov_deg);
    else
        run_camera_home(a, &se);
    a->cam = a->cam_home;
    a->param_index = 0;
    snprintf(a->scene_name, sizeof a->scene_name, "%s", s.name);
    const char *short_name = strstr(s.name, "scenes/") ? strstr(s.name, "scenes/") : s.name;
    run_set_status(a, "model %s: %zu fish (%s)", shoal_model_name(m), a->desc.boid_count,
                   short_name);
}

/* PageUp/PageDown and r: a new school of `n` fish with `seed`, same model and parameters. */
static void reseed(app *a, size_t n, uint64_t seed)
{
    shoal_sim_desc old = a->desc;
    uint64_t old_seed = a->seed;
    a->desc.boid_count = n;
    a->seed = seed;
    if (a->count_override)
        a->count_override = n;
    shoal_error e;
    if (run_sim_open(a, &e)) {
        run_set_status(a, "cannot make %zu fish: %s", n, e.message);
        a->desc = old;
        a->seed = old_seed;
        run_sim_open(a, &e);
        return;
    }
    run_set_status(a, "%zu fish, seed %llu", n, (unsigned long long)seed);
}

static void param_adjust(app *a, int dir, int reset)
{
    const shoal_param_info *list[RUN_EDITABLE_COUNT];
    int n = run_params_editable(a->desc.model, list);
    if (n == 0)
        return;
    const shoal_param_info *p = list[a->param_index % n];
    float v = run_param_value(&a->desc.params, p), nv;
    if (reset) {
        nv = run_param_value(&a->scene_params, p);
    } else if (p->is_integer) {
        nv = v + (float)dir;
    } else if (fabsf(v) > 1e-6f) {
        nv = dir > 0 ? (v > 0 ? v * 1.1f : v / 1.1f) : (v > 0 ? v / 1.1f : v * 1.1f);
    } else {
        float span = p->max - p->min;
        nv = (float)dir * (span < 10 ? span * 0.02f : 0.1f);
    }
    nv = nv < p->min ? p->min : nv > p->max ? p->max : nv;
    /* the value itself (not its text read back, which rounded it to 6 digits), set on the
     * CPU sim and on the GPU sim, which keeps its state and device memory */
    shoal_params np = a->desc.params;
    run_param_set(&np, p, nv);
    shoal_error e;
    if (shoal_sim_set_params(a->sim, &np, &e)) {
        run_set_status(a, "%s", e.message);
        return;
    }
    if (a->gpu && shoal_gpu_sim_set_params(a->gpu, &np, &e)) {
        shoal_sim_set_params(a->sim, &a->desc.params, NULL); /* accepted before: cannot fail */
        run_set_status(a, "GPU: %s", e.message);
        return;
    }
    a->desc.params = np;
    run_set_status(a, "%s = %.9g", p->name, (double)nv);
}

/* ---- picking, targets and obstacles ---------------------------------------------------- */

/* Right click: the boid drawn nearest to pixel (x, y), within 40 pixels. */
static void pick_at(app *a, int x, int y, int w, int h)
{
    shoal_boid_view v = shoal_sim_view(a->sim);
    shoal_camera c = run_orbit_camera(&a->cam);
    proj p = proj_make(&c, w, h);
    float best = 40.0f * 40.0f, best_depth = INFINITY;
    long long row = -1;
    for (size_t i = 0; i < v.count; i++) {
        float q[3] = {v.px[i], v.py[i], v.pz[i]}, sx, sy, vv[3];
        if (!proj_point(&p, q, &sx, &sy))
            continue;
        float dx = sx - (float)x, dy = sy - (float)y, d2 = dx * dx + dy * dy;
        proj_view(&p, q, vv);
        /* nearest on screen; among those within 6 px, the nearest to the eye */
        if (d2 < best - 36.0f || (d2 < 36.0f && vv[2] < best_depth)) {
            best = d2;
            best_depth = d2 < 36.0f ? vv[2] : INFINITY;
            row = v.row_of[i];
        }
    }
    if (row >= 0) {
        a->picked_row = row;
        a->grid = 1;
        run_set_status(a, "picked boid %lld", row);
    }
}

/* The target whose marker is within OVERLAY_PICK_PX of pixel (x, y), nearest first; -1. */
static int target_at(app *a, const proj *p, int x, int y, float pos[3])
{
    float t[SHOAL_MAX_TARGETS * 3];
    size_t nt = shoal_sim_targets(a->sim, run_sim_time(a), t, SHOAL_MAX_TARGETS);
    int best = -1;
    float best_d2 = (float)(OVERLAY_PICK_PX * OVERLAY_PICK_PX);
    for (size_t k = 0; k < nt; k++) {
        float sx, sy;
        if (!proj_point(p, t + 3 * k, &sx, &sy))
            continue;
        float dx = sx - (float)x, dy = sy - (float)y, d2 = dx * dx + dy * dy;
        if (d2 <= best_d2) {
            best_d2 = d2;
            best = (int)k;
            memcpy(pos, t + 3 * k, 3 * sizeof(float));
        }
    }
    return best;
}

/* Move target k under pixel (x, y), on the plane through `on` facing the camera. */
static void target_move(app *a, int k, int x, int y, int w, int h, const float on[3],
                        const char *what)
{
    shoal_camera c = run_orbit_camera(&a->cam);
    proj p = proj_make(&c, w > 0 ? w : 1, h > 0 ? h : 1);
    float q[3];
    proj_unproject(&p, (float)x + 0.5f, (float)y + 0.5f, on, q);
    if (a->gpu) {
        run_set_status(a, "the CUDA backend keeps the seed's target schedule: drag targets with "
                          "--backend cpu");
        return;
    }
    shoal_error e;
    if (shoal_sim_set_target(a->sim, (size_t)k, q, &e)) {
        run_set_status(a, "%s", e.message);
        return;
    }
    if (what)
        run_set_status(a, "target %d %s (%.2f, %.2f, %.2f)", k, what, (double)q[0], (double)q[1],
                       (double)q[2]);
}

/* Keys m/M and n: nudge and turn the first obstacle mesh (the field is rebuilt). */
static void obstacle_nudge(app *a, float dx, float dry)
{
    if (a->obs_count == 0 || !a->sim) {
        run_set_status(a, "no obstacle mesh in this scene");
        return;
    }
    shoal_transform t = a->obs_xf[0];
    t.position[0] += dx;
    t.rotation_deg[1] += dry;
    shoal_error e;
    if (shoal_sim_move_obstacle(a->sim, 0, &t, &e) ||
        (a->gpu && shoal_gpu_sim_copy_obstacles(a->gpu, a->sim, &e))) {
        run_set_status(a, "%s", e.message);
        return;
    }
    a->obs_xf[0] = t;
    run_set_status(a, "obstacle at x %.2f, turned %.0f deg (field rebuilt, %llu builds)",
                   (double)t.position[0], (double)t.rotation_deg[1],
                   (unsigned long long)shoal_sim_field(a->sim).builds);
}

/* ---- keys and mouse -------------------------------------------------------------------- */

static const char *key_label(int key, char *buf, size_t n)
{
    if (key > 32 && key < 127)
        snprintf(buf, n, "%c", key);
    else if (key == ' ')
        snprintf(buf, n, "space");
    else
        snprintf(buf, n, "#%d", key);
    return buf;
}

static void handle_key(app *a, int key, int mods, int width, int height)
{
    const shoal_param_info *list[RUN_EDITABLE_COUNT];
    int np = run_params_editable(a->desc.model, list);
    (void)width, (void)height;
    switch (key) {
    case APP_KEY_ESCAPE:
    case 'q':
        a->quit = 1;
        break;
    case ' ':
        a->paused = !a->paused;
        run_set_status(a, "%s", a->paused ? "paused" : "running");
        break;
    case '.':
        a->paused = 1;
        a->step_once = 1;
        break;
    case '[':
        a->speed = fmax(1.0 / 16, a->speed * 0.5);
        run_set_status(a, "speed %gx", a->speed);
        break;
    case ']':
        a->speed = fmin(16.0, a->speed * 2);
        run_set_status(a, "speed %gx", a->speed);
        break;
    case '0':
        a->speed = 1;
        run_set_status(a, "speed 1x");
        break;
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9':
        if (key - '1' < SHOAL_MODEL_COUNT) /* the models in enum order */
            switch_model(a, (shoal_model)(key - '1'));
        break;
    case APP_KEY_PAGEUP:
        if (a->desc.boid_count * 2 <= (size_t)4 << 20)
            reseed(a, a->desc.boid_count * 2, a->seed);
        break;
    case APP_KEY_PAGEDOWN:
        if (a->desc.boid_count >= 2)
            reseed(a, a->desc.boid_count / 2, a->seed);
        break;
    case 'r':
        reseed(a, a->desc.boid_count, a->seed + 1);
        break;
    case APP_KEY_UP:
    case APP_KEY_DOWN:
    case APP_KEY_TAB:
        if (np) {
            int d = key == APP_KEY_UP || (key == APP_KEY_TAB && (mods & APP_MOD_SHIFT)) ? -1 : 1;
            a->param_index = ((a->param_index % np) + d + np) % np;
            const shoal_param_info *p = list[a->param_index];
            run_set_status(a, "parameter %s = %.9g: %s", p->name,
                           (double)run_param_value(&a->desc.params, p), p->help);
        }
        break;
    case APP_KEY_RIGHT:
    case '=':
    case '+':
    case APP_KEY_KP_PLUS:
        param_adjust(a, 1, 0);
        break;
    case APP_KEY_LEFT:
    case '-':
    case APP_KEY_KP_MINUS:
        param_adjust(a, -1, 0);
        break;
    case APP_KEY_BACKSPACE:
        param_adjust(a, 0, 1);
        break;
    case 'i':
    case APP_KEY_F3:
        a->hud = !a->hud;
        break;
    case 'h':
    case '/':
    case APP_KEY_F1:
        a->help = !a->help;
        break;
    case 'l': {
        a->rdesc.lod = !a->rdesc.lod;
        shoal_renderer *r;
        shoal_error e;
        if (app_render_create(&a->rdesc, NULL, NULL, &r, &e) == 0) {
            shoal_render_destroy(a->ren);
            a->ren = r;
            shoal_render_set_profile(r, a->prof);
            run_set_status(a, "level of detail %s", run_onoff(a->rdesc.lod));
        } else {
            a->rdesc.lod = !a->rdesc.lod;
            run_set_status(a, "%s", e.message);
        }
        break;
    }
    case 'k':
        a->place_mode = !a->place_mode;
        run_set_status(a, "target placing %s (left click places the next heading target)",
                       run_onoff(a->place_mode));
        break;
    case 'm':
        obstacle_nudge(a, (mods & APP_MOD_SHIFT) ? -1.0f : 1.0f, 0.0f);
        break;
    case 'n':
        obstacle_nudge(a, 0.0f, (mods & APP_MOD_SHIFT) ? -15.0f : 15.0f);
        break;
    case 'g':
        a->grid = !a->grid;
        if (a->grid && a->picked_row < 0)
            run_pick_default(a);
        run_set_status(a, "grid view %s", run_onoff(a->grid));
        break;
    case 't':
        a->trails = !a->trails;
        run_trails_reset(a);
        run_set_status(a, "trails %s", run_onoff(a->trails));
        break;
    case 'f':
        a->follow = !a->follow;
        run_set_status(a, "follow %s", run_onoff(a->follow));
        break;
    case 'c':
    case APP_KEY_HOME:
        a->cam = a->cam_home;
        a->follow = 0;
        run_set_status(a, "camera reset");
        break;
    case 'p':
    case APP_KEY_F12:
        a->shot_requested = 1;
        break;
    default:
        break;
    }
}

void run_handle_event(app *a, const app_event *ev, int w, int h)
{
    char kb[16];
    switch (ev->type) {
    case APP_EVENT_QUIT:
        a->quit = 1;
        break;
    case APP_EVENT_KEY:
        if (a->log_input)
            printf("input: key %s (%s)\n", key_label(ev->key, kb, sizeof kb),
                   ev->injected ? "script" : "platform");
        handle_key(a, ev->key, ev->mods, w, h);
        break;
    case APP_EVENT_BUTTON_DOWN:
        if (a->log_input)
            printf("input: button %d down at %d %d (%s)\n", ev->button, ev->x, ev->y,
                   ev->injected ? "script" : "platform");
        a->drag_button = ev->button;
        a->drag_moved = 0;
        a->drag_x = ev->x;
        a->drag_y = ev->y;
        a->mods = ev->mods;
        float tg[SHOAL_MAX_TARGETS * 3];
        if (ev->button == APP_BUTTON_LEFT &&
            shoal_sim_targets(a->sim, run_sim_time(a), tg, SHOAL_MAX_TARGETS) > 0) {
            /* a marker under the pointer: drag it; ctrl+click elsewhere: place the next */
            shoal_camera c = run_orbit_camera(&a->cam);
            proj p = proj_make(&c, w > 0 ? w : 1, h > 0 ? h : 1);
            float pos[3];
            int k = target_at(a, &p, ev->x, ev->y, pos);
            if (k >= 0) {
                a->target_drag = k + 1;
                a->drag_button = 0; /* no orbit */
                run_set_status(a, "target %d grabbed", k);
            } else if ((ev->mods & APP_MOD_CTRL) || a->place_mode) {
                int n = (int)a->desc.params.target_count;
                int t = a->target_next++ % (n > 0 ? n : 1);
                float centre[3];
                shoal_boid_view v = shoal_sim_view(a->sim);
                run_school_centre(a, &v, centre);
                target_move(a, t, ev->x, ev->y, w, h, centre, "placed at");
                a->drag_button = 0;
            }
        }
        break;
    case APP_EVENT_BUTTON_UP:
        if (a->log_input)
            printf("input: button %d up at %d %d (%s)\n", ev->button, ev->x, ev->y,
                   ev->injected ? "script" : "platform");
        if (ev->button == APP_BUTTON_RIGHT && !a->drag_moved)
            pick_at(a, ev->x, ev->y, w, h);
        if (ev->button == APP_BUTTON_LEFT && a->target_drag) {
            int k = a->target_drag - 1;
            float t[SHOAL_MAX_TARGETS * 3];
            if (shoal_sim_targets(a->sim, run_sim_time(a), t, SHOAL_MAX_TARGETS) > (size_t)k)
                target_move(a, k, ev->x, ev->y, w, h, t + 3 * k, "dragged to");
            a->target_drag = 0;
        }
        a->drag_button = 0;
        break;
    case APP_EVENT_MOTION: {
        if (a->target_drag && (ev->buttons & 1)) {
            int k = a->target_drag - 1;
            float t[SHOAL_MAX_TARGETS * 3];
            if (shoal_sim_targets(a->sim, run_sim_time(a), t, SHOAL_MAX_TARGETS) > (size_t)k)
                target_move(a, k, ev->x, ev->y, w, h, t + 3 * k, NULL);
            break;
        }
        if (!a->drag_button || !ev->buttons)
            break;
        int dx = ev->dx, dy = ev->dy;
        if (abs(ev->x - a->drag_x) + abs(ev->y - a->drag_y) > 3)
            a->drag_moved = 1;
        int pan = a->drag_button == APP_BUTTON_RIGHT || a->drag_button == APP_BUTTON_MIDDLE ||
                  (a->mods & APP_MOD_SHIFT);
        if (!pan) {
            a->cam.yaw -= (float)dx * 0.006f;
            a->cam.pitch += (float)dy * 0.006f;
            a->cam.pitch = fmaxf(-1.50f, fminf(1.50f, a->cam.pitch));
        } else {
            shoal_camera c = run_orbit_camera(&a->cam);
            proj p = proj_make(&c, w > 0 ? w : 1, h > 0 ? h : 1);
            float s = a->cam.dist / p.k; /* world units per pixel at the target */
            for (int k = 0; k < 3; k++)
                a->cam.target[k] += (-(float)dx * p.s[k] + (float)dy * p.u[k]) * s;
            a->follow = 0;
        }
        if (a->log_input && !ev->injected)
            printf("input: drag %d %d (platform)\n", dx, dy);
        break;
    }
    case APP_EVENT_WHEEL:
        if (a->log_input)
            printf("input: wheel %g (%s)\n", (double)ev->wheel,
                   ev->injected ? "script" : "platform");
        a->cam.dist_goal *= powf(0.88f, ev->wheel);
        a->cam.dist_goal = fmaxf(0.5f, fminf(5000.0f, a->cam.dist_goal));
        break;
    case APP_EVENT_RESIZED:
        if (a->log_input)
            printf("input: resized %dx%d\n", ev->width, ev->height);
        break;
    case APP_EVENT_MINIMIZED:
        if (a->log_input)
            printf("input: minimized\n");
        a->minimized = 1;
        break;
    case APP_EVENT_RESTORED:
        if (a->log_input && a->minimized)
            printf("input: restored\n");
        a->minimized = 0;
        break;
    default:
        break;
    }
}

/* ---- scripted input -------------------------------------------------------------------- */

int run_script_load(run_script *s, const char *path)
{
    memset(s, 0, sizeof *s);
    FILE *f = fopen(path, "r");
    if (!f) {
        options_error("run", "--script %s: %s", path, strerror(errno));
        return 2;
    }
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        size_t n = strlen(line);
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' '))
            line[--n] = 0;
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p || *p == '#')
            continue;
        char **nl = realloc(s->lines, sizeof *nl * (size_t)(s->count + 1));
        if (!nl) {
            fclose(f);
            return 2;
        }
        s->lines = nl;
        s->lines[s->count++] = strdup(p);
    }
    fclose(f);
    return 0;
}

void run_script_free(run_script *s)
{
    for (int i = 0; i < s->count; i++)
        free(s->lines[i]);
    free(s->lines);
}

/* The app key code of a key name as scripts write them (for wait-key). */
static int script_key_code(const char *name)
{
    if (strlen(name) == 1)
        return (unsigned char)name[0] >= 'A' && (unsigned char)name[0] <= 'Z' ? name[0] + 32
                                                                              : name[0];
    if (strcmp(name, "space") == 0)
        return ' ';
    if (strcmp(name, "Escape") == 0)
        return APP_KEY_ESCAPE;
    return -1;
}

/* Run script lines until one makes the app wait. Returns 0, or an exit code on failure. */
int run_script_advance(app *a, run_script *s)
{
    while (s->next < s->count && !s->wait_frames && !s->wait_key && !s->wait_shot) {
        const char *line = s->lines[s->next++];
        char cmd[32] = "", arg[1024] = "";
        sscanf(line, "%31s %1023[^\n]", cmd, arg);
        if (strcmp(cmd, "frames") == 0) {
            s->wait_frames = atoll(arg);
        } else if (strcmp(cmd, "screenshot") == 0) {
            if (!arg[0]) {
                fprintf(stderr, "shoal run: script: screenshot needs a path\n");
                return 2;
            }
            snprintf(a->shot_path, sizeof a->shot_path, "%s", arg);
            char why[128];
            window_inject(a->win, "key F12", why, sizeof why);
            s->wait_shot = 1;
        } else if (strcmp(cmd, "wait-key") == 0) {
            char name[64] = "";
            double secs = 10;
            sscanf(arg, "%63s %lf", name, &secs);
            s->wait_key = script_key_code(name);
            if (s->wait_key < 0) {
                options_error("run", "script: wait-key: unknown key '%s'", name);
                return 2;
            }
            s->wait_until = run_now_s() + secs;
        } else if (strcmp(cmd, "touch") == 0) {
            FILE *f = fopen(arg, "w");
            if (f)
                fclose(f);
        } else if (strcmp(cmd, "echo") == 0) {
            printf("%s\n", arg);
        } else {
            char why[256];
            if (window_inject(a->win, line, why, sizeof why) != 0) {
                options_error("run", "script line %d '%s': %s", s->next, line, why);
                return 2;
            }
            s->wait_frames = 1; /* let the events arrive and a frame be drawn */
        }
        fflush(stdout);
    }
    return 0;
}
