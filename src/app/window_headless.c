/* SPDX-License-Identifier: MIT */
/* The window layer (window.h) of a build without SDL2: there is never a display, so
 * `shoal run` goes headless (PNG frames, video through ffmpeg). No SDL call anywhere. */
#include "app/window.h"

#include <stdio.h>

int window_display_available(void) { return 0; }

app_window *window_open(const app_window_desc *desc, char *why, size_t why_size)
{
    (void)desc;
    if (why && why_size)
        snprintf(why, why_size, "this shoal was built without SDL2 (no window support)");
    return NULL;
}

void window_close(app_window *w) { (void)w; }

app_window_info window_get_info(const app_window *w)
{
    (void)w;
    app_window_info i = {"none", "none", "", 0, 0, NULL, 0, 0};
    return i;
}

int window_poll(app_window *w, app_event *ev, int wait_ms)
{
    (void)w;
    (void)ev;
    (void)wait_ms;
    return 0;
}

uint32_t *window_begin_frame(app_window *w, int *width, int *height, int *stride_px)
{
    (void)w;
    (void)width;
    (void)height;
    (void)stride_px;
    return NULL;
}

int window_present(app_window *w)
{
    (void)w;
    return -1;
}

app_font *font_open(int px)
{
    (void)px;
    fprintf(stderr, "shoal: this shoal was built without SDL2_ttf: the HUD has no text\n");
    return NULL;
}

void font_close(app_font *f) { (void)f; }

void font_cell(const app_font *f, int *char_w, int *char_h)
{
    (void)f;
    *char_w = 0;
    *char_h = 0;
}

const char *font_path(const app_font *f)
{
    (void)f;
    return NULL;
}

void font_draw_text(const app_font *f, uint32_t *buf, int width, int height, int stride_px, int x,
                    int y, const char *text, uint32_t argb)
{
    (void)f, (void)buf, (void)width, (void)height, (void)stride_px, (void)x, (void)y;
    (void)text, (void)argb;
}

const app_font *window_font(const app_window *w)
{
    (void)w;
    return NULL;
}

int window_inject(app_window *w, const char *line, char *why, size_t why_size)
{
    (void)w;
    (void)line;
    if (why && why_size)
        snprintf(why, why_size, "no window");
    return -1;
}
