/* SPDX-License-Identifier: MIT */
/* `shoal run`: the window loop. Events, the script, the simulation stepped at a fixed dt
 * decoupled from the display (an accumulator of wall time times the speed, a cap on steps per
 * frame, positions extrapolated by the leftover fraction of a step), the camera easing, a
 * frame drawn and presented, pacing when the present path has no vsync. */
#include "app/run_app.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static void sleep_s(double s)
{
    if (s <= 0)
        return;
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    nanosleep(&ts, NULL);
}

/* ---- the window: main loop ------------------------------------------------------------- */

int run_window(app *a)
{
    const run_cfg *c = &a->cfg;
    run_script sc;
    memset(&sc, 0, sizeof sc);
    int rc = 0;
    if (c->script && (rc = run_script_load(&sc, c->script)))
        return rc;
    a->log_input = c->script != NULL;
    a->winfo = window_get_info(a->win);
    a->font = window_font(a->win);
    printf("shoal run: window %dx%d, present path %s%s%s%s, video driver %s, %s, font %s\n",
           c->width, c->height, a->winfo.present_path, a->winfo.gpu_note[0] ? " (" : "",
           a->winfo.gpu_note, a->winfo.gpu_note[0] ? ")" : "", a->winfo.video_driver,
           c->vsync ? (a->winfo.vsync ? "vsync" : "no vsync on this path: frames paced")
                    : "vsync off",
           a->winfo.font_path ? a->winfo.font_path : "none (no HUD text)");
    fflush(stdout);
    signal(SIGINT, run_on_signal);
    signal(SIGTERM, run_on_signal);
    double pace = 0;
    if (c->vsync && !a->winfo.vsync)
        pace = 1.0 / (a->winfo.refresh_hz > 0 ? a->winfo.refresh_hz : 60);
    a->t_start = a->hud_since = run_now_s();
    double last = run_now_s(), next_deadline = last;
    long long frames = 0;
    int shot_wait_frames = 0;
    double step_ms_ema = 0;
    while (!a->quit && !run_interrupted) {
        double t0 = run_now_s();
        if (sc.lines && (rc = run_script_advance(a, &sc)))
            break;
        int w = a->rdesc.width, h = a->rdesc.height;
        app_event ev;
        while (window_poll(a->win, &ev, 0)) {
            if (sc.wait_key && ev.type == APP_EVENT_KEY && !ev.injected && ev.key == sc.wait_key)
                sc.wait_key = 0;
            run_handle_event(a, &ev, w, h);
        }
        if (a->quit)
            break;
        if (sc.wait_key && run_now_s() > sc.wait_until) {
            fprintf(stderr, "shoal run: script: timed out waiting for a key from the display\n");
            rc = 1;
            break;
        }
        /* fixed dt: the accumulator gets wall time x speed; at most a few steps a frame
         * (falling behind turns into slow motion, never a spiral) */
        double frame_s = t0 - last;
        last = t0;
        if (frame_s > 0.25)
            frame_s = 0.25;
        int steps = 0;
        if (a->minimized) {
            a->acc_s = 0;
        } else if (c->steps_per_frame > 0) {
            steps = a->paused ? 0 : c->steps_per_frame;
        } else if (!a->paused) {
            a->acc_s += frame_s * a->speed;
            steps = (int)(a->acc_s / a->desc.dt_s);
            /* no more steps than fit in ~20 ms: when the simulation is the bottleneck,
             * catching up would only make every frame longer */
            int cap = 4 + (int)ceil(a->speed);
            if (step_ms_ema > 0 && 20.0 / step_ms_ema < cap)
                cap = 20.0 / step_ms_ema < 1 ? 1 : (int)(20.0 / step_ms_ema);
            if (steps > cap) {
                steps = cap;
                a->acc_s = 0;
            } else {
                a->acc_s -= steps * a->desc.dt_s;
            }
        }
        if (a->step_once) {
            steps = 1;
            a->step_once = 0;
        }
        double ts0 = run_now_s();
        if ((rc = run_sim_steps(a, steps)))
            break;
        if (steps > 0) {
            double ms = (run_now_s() - ts0) * 1e3 / steps;
            step_ms_ema = step_ms_ema > 0 ? step_ms_ema * 0.8 + ms * 0.2 : ms;
        }
        run_camera_update(a, frame_s); /* zoom and follow */
        canvas cv;
        cv.px = a->minimized ? NULL : window_begin_frame(a->win, &cv.w, &cv.h, &cv.stride);
        if (!cv.px) {
            /* minimised or zero-sized: nothing to draw; wait for events, use no CPU */
            if (sc.wait_shot && ++shot_wait_frames > 300) {
                fprintf(stderr, "shoal run: script: screenshot: the window shows nothing\n");
                rc = 1;
                break;
            }
            if (window_poll(a->win, &ev, 50))
                run_handle_event(a, &ev, w, h);
            if (sc.wait_frames > 0)
                sc.wait_frames--;
            continue;
        }
        if ((rc = run_draw_frame(a, &cv, steps > 0)))
            break;
        if (a->shot_requested) {
            double ts = run_now_s();
            run_screenshot(a, &cv);
            sc.wait_shot = 0;
            shot_wait_frames = 0;
            a->win_t.ms[T_OUTPUT] += (run_now_s() - ts) * 1e3;
            a->win_t.calls[T_OUTPUT]++;
        }
        double tp = run_now_s();
        window_present(a->win);
        double tq = run_now_s();
        run_time_add(&a->win_t, T_PRESENT, (tq - tp) * 1e3);
        run_time_add(&a->win_t, T_FRAME, (tq - t0) * 1e3);
        a->win_t.frames++;
        frames++;
        if (sc.wait_frames > 0)
            sc.wait_frames--;
        run_stats_roll(a, 0);
        if (c->frames && frames >= c->frames)
            break;
        if (pace > 0) {
            next_deadline += pace;
            double t = run_now_s();
            if (next_deadline < t - pace)
                next_deadline = t; /* fell behind: do not try to catch up */
            sleep_s(next_deadline - t);
        }
    }
    if (sc.lines && !rc && (sc.next < sc.count || sc.wait_key || sc.wait_shot) && !a->quit)
        rc = run_interrupted ? 130 : 0;
    run_script_free(&sc);
    run_print_summary(a, "window");
    return rc;
}
