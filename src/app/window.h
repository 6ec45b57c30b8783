/* SPDX-License-Identifier: MIT */
/* The window layer of `shoal run`: the only thing the app knows of the platform. It opens a
 * resizable window, hands out an ARGB8888 buffer the size of the window for each frame,
 * presents it, maps the platform's input to the small event set below, draws monospace text
 * into an ARGB buffer (glyphs rasterized by the platform's font library, also without a
 * window: headless runs draw the HUD too), and injects
 * scripted events for the tests. window_sdl.c implements it with SDL2 + SDL2_ttf +
 * fontconfig and is the only file that includes SDL.h; without SDL every call fails
 * cleanly (window_open returns NULL) and the app runs headless. Single-threaded: call
 * everything from the thread that opened the window. */
#ifndef SHOAL_APP_WINDOW_H
#define SHOAL_APP_WINDOW_H

#include <stddef.h>
#include <stdint.h>

typedef struct app_window app_window;

/** Keys the app understands. Printable keys are their (lower-case) ASCII code; the rest
 *  are values above 255. */
enum {
    APP_KEY_ESCAPE = 27,
    APP_KEY_TAB = 9,
    APP_KEY_RETURN = 13,
    APP_KEY_BACKSPACE = 8,
    APP_KEY_UP = 256,
    APP_KEY_DOWN,
    APP_KEY_LEFT,
    APP_KEY_RIGHT,
    APP_KEY_PAGEUP,
    APP_KEY_PAGEDOWN,
    APP_KEY_HOME,
    APP_KEY_END,
    APP_KEY_F1,
    APP_KEY_F2,
    APP_KEY_F3,
    APP_KEY_F11,
    APP_KEY_F12,
    APP_KEY_KP_PLUS,
    APP_KEY_KP_MINUS,
    APP_KEY_OTHER,
};

/** Modifier bits of key and mouse events. */
enum { APP_MOD_SHIFT = 1, APP_MOD_CTRL = 2, APP_MOD_ALT = 4 };

/** Mouse buttons. */
enum { APP_BUTTON_LEFT = 1, APP_BUTTON_MIDDLE = 2, APP_BUTTON_RIGHT = 3 };

typedef enum app_event_type {
    APP_EVENT_NONE = 0,
    APP_EVENT_QUIT,        /**< window closed or the platform asks to quit */
    APP_EVENT_KEY,         /**< key pressed (repeats included): key, mods */
    APP_EVENT_BUTTON_DOWN, /**< button, x, y, mods */
    APP_EVENT_BUTTON_UP,   /**< button, x, y, mods */
    APP_EVENT_MOTION,      /**< x, y, dx, dy, buttons (bit b-1 set when button b is down) */
    APP_EVENT_WHEEL,       /**< dy: positive away from the user (zoom in) */
    APP_EVENT_RESIZED,     /**< the drawable is now width x height pixels */
    APP_EVENT_MINIMIZED,   /**< hidden or iconified: stop drawing */
    APP_EVENT_RESTORED,    /**< visible again */
} app_event_type;

typedef struct app_event {
    app_event_type type;
    int key, mods;
    int button, buttons;
    int x, y, dx, dy;
    float wheel;
    int width, height;
    int injected; /**< 1 when it came from window_inject (a script), 0 from the platform */
} app_event;

typedef struct app_window_desc {
    const char *title;
    int width, height; /**< initial size in pixels */
    int vsync;         /**< 1: wait for the display's refresh where the present path can */
    int font_px;       /**< HUD font size in pixels (0: 15) */
} app_window_desc;

/** What the window can do, for the HUD and the docs. */
typedef struct app_window_info {
    const char *present_path; /**< "surface (software)" or "texture (<renderer name>)" */
    const char *video_driver; /**< "x11", "wayland", ... */
    const char *gpu_note;     /**< why the texture path was not taken ("" if it was) */
    int vsync;                /**< 1 when presents wait for the refresh */
    int refresh_hz;           /**< the display's refresh rate, 0 if unknown */
    const char *font_path;    /**< NULL when no font was found (no text) */
    int char_w, char_h;       /**< text cell size in pixels (0 when no font) */
} app_window_info;

/** Is there a display to open a window on? (SDL built in and DISPLAY or WAYLAND_DISPLAY
 *  set.) A cheap check before window_open; window_open can still fail. */
int window_display_available(void);

/** Open the window. NULL on failure with a one-line reason in `why` (`why_size` bytes). */
app_window *window_open(const app_window_desc *desc, char *why, size_t why_size);
void window_close(app_window *w);
app_window_info window_get_info(const app_window *w);

/** Next pending event (0 when none). With `wait_ms` > 0 waits up to that long for one. */
int window_poll(app_window *w, app_event *ev, int wait_ms);

/** The frame buffer to draw into: width x height ARGB8888 pixels, stride in pixels. NULL
 *  when the window has no drawable area (minimised, zero size). Valid until window_present. */
uint32_t *window_begin_frame(app_window *w, int *width, int *height, int *stride_px);
/** Show the buffer of window_begin_frame. Returns 0 on success. */
int window_present(app_window *w);

/** The HUD's monospace font: fontconfig's "DejaVu Sans Mono" (Bold) or "monospace"
 *  (SHOAL_FONT=FILE.ttf overrides) through SDL2_ttf, each glyph rendered once into an alpha
 *  mask. It needs no display: a headless run draws the HUD with it as the window does.
 *  font_open returns NULL after one line on stderr saying why there is no text (no font,
 *  or a build without SDL2); every call takes NULL (no text, cell 0 x 0). */
typedef struct app_font app_font;
app_font *font_open(int px);
void font_close(app_font *f);
/** The text cell in pixels (0 x 0 for NULL). */
void font_cell(const app_font *f, int *char_w, int *char_h);
/** The font file (NULL for NULL). */
const char *font_path(const app_font *f);
/** Draw `text` (ASCII; '\n' starts a new line) at pixel (x, y) = top-left of the first cell,
 *  alpha-blended in `argb` (0xAARRGGBB, alpha = opacity). Clipped to the buffer. */
void font_draw_text(const app_font *f, uint32_t *buf, int width, int height, int stride_px, int x,
                    int y, const char *text, uint32_t argb);
/** The window's font (NULL when it found none). */
const app_font *window_font(const app_window *w);

/** Inject one scripted input line as platform events, exactly as a user's input arrives:
 *    key NAME           press and release (NAME as SDL names keys: space, 3, Escape, Up,
 *                       F1, PageUp; "shift+NAME", "ctrl+NAME" add modifiers)
 *    click X Y [B]      button B (1 left, 2 middle, 3 right; default 1) at X Y
 *    drag X0 Y0 X1 Y1 [B]   press at X0 Y0, move in steps, release at X1 Y1
 *    move X Y           pointer motion
 *    wheel N            N notches (positive: away from the user)
 *    resize W H         resize the window (and report the new size)
 *    minimize, restore  iconify / restore the window (and report it)
 *    quit               ask the app to quit
 *  Returns 0 when the line was understood, -1 otherwise (with `why`). */
int window_inject(app_window *w, const char *line, char *why, size_t why_size);

#endif
