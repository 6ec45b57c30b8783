/* SPDX-License-Identifier: MIT */
/* The window layer (window.h) on SDL2, SDL2_ttf and fontconfig: the only file of shoal that
 * includes SDL.h. It picks the present path (a streaming texture when SDL gives a renderer
 * that is accelerated by a real GPU; else the window surface with framebuffer acceleration
 * off, which on X11 is a shared-memory image: no GPU, no GL, one copy), maps SDL events to
 * app_event, caches the HUD font's glyphs as alpha masks and blends them into ARGB buffers,
 * and turns script lines into SDL events with SDL_PushEvent. It knows nothing of boids. */
#include "app/window.h"

#include <SDL.h>
#include <SDL_ttf.h>
#include <fontconfig/fontconfig.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Marks events that window_inject pushed, so the app can tell them from the user's (and
 * the tests can prove that real X events arrive too). Stored in fields SDL leaves unused. */
#define INJECT_MARK 0x5A

#define GLYPH_FIRST 32
#define GLYPH_LAST 126

typedef struct glyph {
    int w, h;
    uint8_t *alpha; /* w * h coverage, row 0 at the top */
} glyph;

/* The HUD font: its glyphs as alpha masks (window.h). */
struct app_font {
    TTF_Font *font;
    int ttf_ready, fc_ready;
    glyph glyphs[GLYPH_LAST - GLYPH_FIRST + 1];
    int char_w, char_h;
    char path[1024];
};

struct app_window {
    SDL_Window *win;
    SDL_Renderer *ren; /* texture path only */
    SDL_Texture *tex;
    int tex_w, tex_h;
    int use_texture;
    int vsync;
    int refresh_hz;
    /* frame in progress */
    SDL_Surface *surf; /* surface path: the window surface */
    uint32_t *shadow;  /* when the surface is not 32-bit XRGB/ARGB, or for the texture's pitch */
    size_t shadow_cap;
    int frame_w, frame_h, frame_stride;
    uint32_t *frame;
    int frame_kind; /* 0 none, 1 surface direct, 2 surface via shadow, 3 texture locked */
    int minimized;
    /* text */
    app_font *font;
    char present_path[128];
    char gpu_note[200];
    char driver[32];
};

static void set_why(char *why, size_t n, const char *fmt, ...)
{
    if (!why || !n)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
}

int window_display_available(void)
{
    const char *drv = getenv("SDL_VIDEODRIVER");
    if (drv && *drv)
        return 1; /* the user chose a driver (offscreen, kmsdrm, ...): let SDL decide */
    const char *d = getenv("DISPLAY"), *wl = getenv("WAYLAND_DISPLAY");
    return (d && *d) || (wl && *wl);
}

/* ---- font ------------------------------------------------------------------------------ */

/* fontconfig: the file of the best match for `pattern`, if it exists. */
static int font_find(const char *pattern, char *out, size_t size)
{
    FcPattern *pat = FcNameParse((const FcChar8 *)pattern);
    if (!pat)
        return 0;
    FcConfigSubstitute(NULL, pat, FcMatchPattern);
    FcDefaultSubstitute(pat);
    FcResult res = FcResultNoMatch;
    FcPattern *m = FcFontMatch(NULL, pat, &res);
    int ok = 0;
    if (m) {
        FcChar8 *file = NULL;
        if (FcPatternGetString(m, FC_FILE, 0, &file) == FcResultMatch && file &&
            access((const char *)file, R_OK) == 0) {
            snprintf(out, size, "%s", (const char *)file);
            ok = 1;
        }
        FcPatternDestroy(m);
    }
    FcPatternDestroy(pat);
    return ok;
}

app_font *font_open(int px)
{
    app_font *w = calloc(1, sizeof *w);
    if (!w) {
        fprintf(stderr, "shoal: out of memory for the HUD font: the HUD has no text\n");
        return NULL;
    }
    const char *env = getenv("SHOAL_FONT");
    int found = 0;
    if (env && *env && access(env, R_OK) == 0) {
        snprintf(w->path, sizeof w->path, "%s", env);
        found = 1;
    } else if (FcInit()) {
        w->fc_ready = 1;
        found = font_find("DejaVu Sans Mono:style=Bold", w->path, sizeof w->path) ||
                font_find("DejaVu Sans Mono", w->path, sizeof w->path) ||
                font_find("monospace", w->path, sizeof w->path);
    }
    if (!found) {
        fprintf(stderr, "shoal: no monospace font found through fontconfig (install "
                        "fonts-dejavu-core, or set SHOAL_FONT=FILE.ttf): the HUD has no text\n");
        font_close(w);
        return NULL;
    }
    if (TTF_Init() != 0) {
        fprintf(stderr, "shoal: SDL_ttf: %s: the HUD has no text\n", TTF_GetError());
        font_close(w);
        return NULL;
    }
    w->ttf_ready = 1;
    w->font = TTF_OpenFont(w->path, px);
    if (!w->font) {
        fprintf(stderr, "shoal: cannot open font %s: %s: the HUD has no text\n", w->path,
                TTF_GetError());
        font_close(w);
        return NULL;
    }
    TTF_SetFontHinting(w->font, TTF_HINTING_LIGHT);
    int adv = 0;
    if (TTF_GlyphMetrics(w->font, 'M', NULL, NULL, NULL, NULL, &adv) != 0 || adv <= 0)
        adv = px / 2 + 1;
    w->char_w = adv;
    w->char_h = TTF_FontLineSkip(w->font);
    /* One blended render per glyph, kept as an alpha mask: a frame's HUD is then only
     * blending, no FreeType call. Each glyph surface is laid out as a one-character string,
     * so glyph i of a line goes at x + i * advance (the font is monospace). */
    SDL_Color white = {255, 255, 255, 255};
    for (int c = GLYPH_FIRST; c <= GLYPH_LAST; c++) {
        glyph *g = &w->glyphs[c - GLYPH_FIRST];
        SDL_Surface *s = TTF_RenderGlyph_Blended(w->font, (Uint16)c, white);
        if (!s)
            continue;
        SDL_Surface *conv = SDL_ConvertSurfaceFormat(s, SDL_PIXELFORMAT_ARGB8888, 0);
        SDL_FreeSurface(s);
        if (!conv)
            continue;
        g->w = conv->w;
        g->h = conv->h;
        g->alpha = malloc((size_t)g->w * (size_t)g->h);
        if (g->alpha) {
            SDL_LockSurface(conv);
            for (int y = 0; y < g->h; y++) {
                const uint32_t *row = (const uint32_t *)((const uint8_t *)conv->pixels +
                                                         (size_t)y * (size_t)conv->pitch);
                for (int x = 0; x < g->w; x++)
                    g->alpha[(size_t)y * (size_t)g->w + (size_t)x] = (uint8_t)(row[x] >> 24);
            }
            SDL_UnlockSurface(conv);
        }
        SDL_FreeSurface(conv);
    }
    return w;
}

void font_close(app_font *w)
{
    if (!w)
        return;
    for (int i = 0; i <= GLYPH_LAST - GLYPH_FIRST; i++)
        free(w->glyphs[i].alpha);
    if (w->font)
        TTF_CloseFont(w->font);
    if (w->ttf_ready)
        TTF_Quit();
    if (w->fc_ready)
        FcFini();
    free(w);
}

void font_cell(const app_font *f, int *char_w, int *char_h)
{
    *char_w = f ? f->char_w : 0;
    *char_h = f ? f->char_h : 0;
}

const char *font_path(const app_font *f) { return f ? f->path : NULL; }

/* LeakSanitizer (the ASan test build): what SDL's D-Bus connection (screensaver, input
 * methods) and Xlib keep for the life of the process is theirs, not a leak of ours. */
const char *__lsan_default_suppressions(void);
__attribute__((used)) const char *__lsan_default_suppressions(void)
{
    return "leak:libdbus-1.so\nleak:libX11.so\nleak:libfontconfig.so\n";
}

static inline uint32_t blend(uint32_t dst, uint32_t rgb, unsigned a)
{
    unsigned dr = (dst >> 16) & 255, dg = (dst >> 8) & 255, db = dst & 255;
    unsigned sr = (rgb >> 16) & 255, sg = (rgb >> 8) & 255, sb = rgb & 255;
    dr = (dr * (255 - a) + sr * a + 127) / 255;
    dg = (dg * (255 - a) + sg * a + 127) / 255;
    db = (db * (255 - a) + sb * a + 127) / 255;
    return 0xFF000000u | (dr << 16) | (dg << 8) | db;
}

void font_draw_text(const app_font *w, uint32_t *buf, int width, int height, int stride_px, int x,
                    int y, const char *text, uint32_t argb)
{
    if (!w || !w->font || !buf || !text)
        return;
    unsigned opacity = argb >> 24;
    int cx = x, cy = y;
    for (const char *p = text; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '\n') {
            cx = x;
            cy += w->char_h;
            continue;
        }
        if (c >= GLYPH_FIRST && c <= GLYPH_LAST && c != ' ') {
            const glyph *g = &w->glyphs[c - GLYPH_FIRST];
            if (g->alpha && cx < width && cy < height && cx + g->w > 0 && cy + g->h > 0) {
                int y0 = cy < 0 ? -cy : 0, y1 = cy + g->h > height ? height - cy : g->h;
                int x0 = cx < 0 ? -cx : 0, x1 = cx + g->w > width ? width - cx : g->w;
                for (int gy = y0; gy < y1; gy++) {
                    uint32_t *row = buf + (size_t)(cy + gy) * (size_t)stride_px + cx;
                    const uint8_t *al = g->alpha + (size_t)gy * (size_t)g->w;
                    for (int gx = x0; gx < x1; gx++) {
                        unsigned a = al[gx];
                        if (!a)
                            continue;
                        a = (a * opacity + 127) / 255;
                        row[gx] = blend(row[gx], argb, a);
                    }
                }
            }
        }
        cx += w->char_w;
    }
}

/* ---- window and present path ----------------------------------------------------------- */

/* Is this SDL renderer backed by a real GPU? SDL calls Mesa's llvmpipe "accelerated" too:
 * ask GL for its renderer string when the backend is GL. */
static int renderer_is_gpu(SDL_Renderer *ren, char *name, size_t size)
{
    SDL_RendererInfo info;
    if (SDL_GetRendererInfo(ren, &info) != 0)
        return 0;
    snprintf(name, size, "%s", info.name);
    if (!(info.flags & SDL_RENDERER_ACCELERATED) || strcmp(info.name, "software") == 0)
        return 0;
    if (strncmp(info.name, "opengl", 6) == 0) {
        typedef const unsigned char *(*get_string_fn)(unsigned int);
        get_string_fn get = (get_string_fn)(uintptr_t)SDL_GL_GetProcAddress("glGetString");
        const unsigned char *r = get ? get(0x1F01 /* GL_RENDERER */) : NULL;
        if (r) {
            snprintf(name, size, "%s, %s", info.name, (const char *)r);
            if (strstr((const char *)r, "llvmpipe") || strstr((const char *)r, "softpipe") ||
                strstr((const char *)r, "Software") || strstr((const char *)r, "swrast"))
                return 0;
        }
    }
    return 1;
}

app_window *window_open(const app_window_desc *desc, char *why, size_t why_size)
{
    if (!window_display_available()) {
        set_why(why, why_size, "no display (DISPLAY and WAYLAND_DISPLAY are not set)");
        return NULL;
    }
    SDL_SetHint(SDL_HINT_VIDEO_X11_NET_WM_BYPASS_COMPOSITOR, "0");
    SDL_SetHint(SDL_HINT_NO_SIGNAL_HANDLERS, "1");
    if (SDL_Init(SDL_INIT_VIDEO) != 0) {
        set_why(why, why_size, "no display (SDL: %s)", SDL_GetError());
        return NULL;
    }
    app_window *w = calloc(1, sizeof *w);
    if (!w) {
        SDL_Quit();
        set_why(why, why_size, "out of memory");
        return NULL;
    }
    snprintf(w->driver, sizeof w->driver, "%s", SDL_GetCurrentVideoDriver());
    const char *title = desc->title ? desc->title : "shoal";
    Uint32 flags = SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI;
    const char *force = getenv("SHOAL_PRESENT"); /* "surface" or "texture": for comparisons */
    int try_texture = !(force && strcmp(force, "surface") == 0);
    char rname[160] = "";
    if (try_texture) {
        w->win = SDL_CreateWindow(title, SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED,
                                  desc->width, desc->height, flags);
        if (w->win) {
            Uint32 rflags =
                SDL_RENDERER_ACCELERATED | (desc->vsync ? SDL_RENDERER_PRESENTVSYNC : 0);
            w->ren = SDL_CreateRenderer(w->win, -1, rflags);
            if (w->ren && (renderer_is_gpu(w->ren, rname, sizeof rname) ||
                           (force && strcmp(force, "texture") == 0))) {
                w->use_texture = 1;
            } else {
                /* No GPU: start again from a fresh window for the surface path (a window
                 * that had a GL context keeps the GL flag). */
                if (w->ren)
                    SDL_DestroyRenderer(w->ren);
                w->ren = NULL;
                SDL_DestroyWindow(w->win);
                w->win = NULL;
            }
        }
    }
    if (!w->use_texture) {
        SDL_SetHint(SDL_HINT_FRAMEBUFFER_ACCELERATION, "0");
        w->win = SDL_CreateWindow(title, SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED,
                                  desc->width, desc->height, flags);
        if (!w->win) {
            set_why(why, why_size, "cannot create a window: %s", SDL_GetError());
            free(w);
            SDL_Quit();
            return NULL;
        }
        snprintf(w->present_path, sizeof w->present_path, "surface (software)");
        if (rname[0])
            snprintf(w->gpu_note, sizeof w->gpu_note, "no GPU: SDL's renderer is %s", rname);
        w->vsync = 0;
    } else {
        SDL_RendererInfo info;
        SDL_GetRendererInfo(w->ren, &info);
        w->vsync = (info.flags & SDL_RENDERER_PRESENTVSYNC) != 0;
        snprintf(w->present_path, sizeof w->present_path, "texture (%s)", rname);
    }
    SDL_DisplayMode mode;
    int di = SDL_GetWindowDisplayIndex(w->win);
    if (di >= 0 && SDL_GetCurrentDisplayMode(di, &mode) == 0)
        w->refresh_hz = mode.refresh_rate;
    w->font = font_open(desc->font_px > 0 ? desc->font_px : 15);
    SDL_ShowWindow(w->win);
    return w;
}

const app_font *window_font(const app_window *w) { return w ? w->font : NULL; }

void window_close(app_window *w)
{
    if (!w)
        return;
    font_close(w->font);
    if (w->tex)
        SDL_DestroyTexture(w->tex);
    if (w->ren)
        SDL_DestroyRenderer(w->ren);
    if (w->win)
        SDL_DestroyWindow(w->win);
    free(w->shadow);
    free(w);
    SDL_Quit();
}

app_window_info window_get_info(const app_window *w)
{
    app_window_info i;
    memset(&i, 0, sizeof i);
    i.present_path = w->present_path;
    i.video_driver = w->driver;
    i.gpu_note = w->gpu_note;
    i.vsync = w->vsync;
    i.refresh_hz = w->refresh_hz;
    i.font_path = font_path(w->font);
    font_cell(w->font, &i.char_w, &i.char_h);
    return i;
}

static uint32_t *shadow_get(app_window *w, int width, int height)
{
    size_t need = (size_t)width * (size_t)height;
    if (need > w->shadow_cap) {
        uint32_t *p = realloc(w->shadow, need * sizeof *p);
        if (!p)
            return NULL;
        w->shadow = p;
        w->shadow_cap = need;
    }
    return w->shadow;
}

uint32_t *window_begin_frame(app_window *w, int *width, int *height, int *stride_px)
{
    w->frame = NULL;
    w->frame_kind = 0;
    if (w->minimized || (SDL_GetWindowFlags(w->win) & SDL_WINDOW_MINIMIZED))
        return NULL;
    if (w->use_texture) {
        int ow = 0, oh = 0;
        if (SDL_GetRendererOutputSize(w->ren, &ow, &oh) != 0 || ow < 1 || oh < 1)
            return NULL;
        if (!w->tex || ow != w->tex_w || oh != w->tex_h) {
            if (w->tex)
                SDL_DestroyTexture(w->tex);
            w->tex = SDL_CreateTexture(w->ren, SDL_PIXELFORMAT_ARGB8888,
                                       SDL_TEXTUREACCESS_STREAMING, ow, oh);
            if (!w->tex)
                return NULL;
            w->tex_w = ow;
            w->tex_h = oh;
        }
        void *pix;
        int pitch;
        if (SDL_LockTexture(w->tex, NULL, &pix, &pitch) != 0)
            return NULL;
        w->frame = pix;
        w->frame_w = ow;
        w->frame_h = oh;
        w->frame_stride = pitch / 4;
        w->frame_kind = 3;
    } else {
        SDL_Surface *s = SDL_GetWindowSurface(w->win);
        if (!s || s->w < 1 || s->h < 1)
            return NULL;
        w->surf = s;
        w->frame_w = s->w;
        w->frame_h = s->h;
        Uint32 f = s->format->format;
        if ((f == SDL_PIXELFORMAT_RGB888 || f == SDL_PIXELFORMAT_ARGB8888) && s->pitch % 4 == 0) {
            if (SDL_MUSTLOCK(s) && SDL_LockSurface(s) != 0)
                return NULL;
            w->frame = s->pixels;
            w->frame_stride = s->pitch / 4;
            w->frame_kind = 1;
        } else {
            w->frame = shadow_get(w, s->w, s->h);
            if (!w->frame)
                return NULL;
            w->frame_stride = s->w;
            w->frame_kind = 2;
        }
    }
    *width = w->frame_w;
    *height = w->frame_h;
    *stride_px = w->frame_stride;
    return w->frame;
}

int window_present(app_window *w)
{
    int rc = 0;
    switch (w->frame_kind) {
    case 1:
        if (SDL_MUSTLOCK(w->surf))
            SDL_UnlockSurface(w->surf);
        rc = SDL_UpdateWindowSurface(w->win);
        break;
    case 2:
        rc = SDL_ConvertPixels(w->frame_w, w->frame_h, SDL_PIXELFORMAT_ARGB8888, w->frame,
                               w->frame_stride * 4, w->surf->format->format, w->surf->pixels,
                               w->surf->pitch);
        if (rc == 0)
            rc = SDL_UpdateWindowSurface(w->win);
        break;
    case 3:
        SDL_UnlockTexture(w->tex);
        SDL_RenderCopy(w->ren, w->tex, NULL, NULL);
        SDL_RenderPresent(w->ren);
        break;
    default:
        break;
    }
    w->frame_kind = 0;
    w->frame = NULL;
    return rc;
}

/* ---- events ---------------------------------------------------------------------------- */

static int map_key(SDL_Keycode k)
{
    switch (k) {
    case SDLK_UP:
        return APP_KEY_UP;
    case SDLK_DOWN:
        return APP_KEY_DOWN;
    case SDLK_LEFT:
        return APP_KEY_LEFT;
    case SDLK_RIGHT:
        return APP_KEY_RIGHT;
    case SDLK_PAGEUP:
        return APP_KEY_PAGEUP;
    case SDLK_PAGEDOWN:
        return APP_KEY_PAGEDOWN;
    case SDLK_HOME:
        return APP_KEY_HOME;
    case SDLK_END:
        return APP_KEY_END;
    case SDLK_F1:
        return APP_KEY_F1;
    case SDLK_F2:
        return APP_KEY_F2;
    case SDLK_F3:
        return APP_KEY_F3;
    case SDLK_F11:
        return APP_KEY_F11;
    case SDLK_F12:
        return APP_KEY_F12;
    case SDLK_KP_PLUS:
        return APP_KEY_KP_PLUS;
    case SDLK_KP_MINUS:
        return APP_KEY_KP_MINUS;
    case SDLK_KP_ENTER:
        return APP_KEY_RETURN;
    case SDLK_PLUS:
        return '+';
    default:
        break;
    }
    if (k > 0 && k < 128)
        return (int)k; /* SDL's keycodes of printable keys are their ASCII codes */
    return APP_KEY_OTHER;
}

static int map_mods(Uint16 m)
{
    return ((m & KMOD_SHIFT) ? APP_MOD_SHIFT : 0) | ((m & KMOD_CTRL) ? APP_MOD_CTRL : 0) |
           ((m & KMOD_ALT) ? APP_MOD_ALT : 0);
}

static int map_buttons(Uint32 state)
{
    return ((state & SDL_BUTTON_LMASK) ? 1 : 0) | ((state & SDL_BUTTON_MMASK) ? 2 : 0) |
           ((state & SDL_BUTTON_RMASK) ? 4 : 0);
}

static int map_button(Uint8 b)
{
    return b == SDL_BUTTON_LEFT     ? APP_BUTTON_LEFT
           : b == SDL_BUTTON_RIGHT  ? APP_BUTTON_RIGHT
           : b == SDL_BUTTON_MIDDLE ? APP_BUTTON_MIDDLE
                                    : 0;
}

/* Translate one SDL event; 0 when the app has no use for it. */
static int translate(app_window *w, const SDL_Event *e, app_event *ev)
{
    memset(ev, 0, sizeof *ev);
    switch (e->type) {
    case SDL_QUIT:
        ev->type = APP_EVENT_QUIT;
        return 1;
    case SDL_KEYDOWN:
        ev->type = APP_EVENT_KEY;
        ev->key = map_key(e->key.keysym.sym);
        ev->mods = map_mods(e->key.keysym.mod);
        ev->injected = e->key.padding2 == INJECT_MARK;
        return 1;
    case SDL_MOUSEBUTTONDOWN:
    case SDL_MOUSEBUTTONUP:
        ev->type = e->type == SDL_MOUSEBUTTONDOWN ? APP_EVENT_BUTTON_DOWN : APP_EVENT_BUTTON_UP;
        ev->button = map_button(e->button.button);
        ev->x = e->button.x;
        ev->y = e->button.y;
        ev->mods = map_mods(SDL_GetModState());
        ev->injected = e->button.padding1 == INJECT_MARK;
        return ev->button != 0;
    case SDL_MOUSEMOTION:
        ev->type = APP_EVENT_MOTION;
        ev->x = e->motion.x;
        ev->y = e->motion.y;
        ev->dx = e->motion.xrel;
        ev->dy = e->motion.yrel;
        ev->buttons = map_buttons(e->motion.state);
        ev->mods = map_mods(SDL_GetModState());
        ev->injected = e->motion.which == (Uint32)INJECT_MARK << 8;
        return 1;
    case SDL_MOUSEWHEEL:
        ev->type = APP_EVENT_WHEEL;
        ev->wheel = (float)e->wheel.y;
        if (e->wheel.direction == SDL_MOUSEWHEEL_FLIPPED)
            ev->wheel = -ev->wheel;
        ev->injected = e->wheel.which == (Uint32)INJECT_MARK << 8;
        return 1;
    case SDL_WINDOWEVENT:
        if (e->window.windowID != SDL_GetWindowID(w->win))
            return 0; /* the probe window of window_open, destroyed since */
        ev->injected = e->window.padding1 == INJECT_MARK;
        switch (e->window.event) {
        case SDL_WINDOWEVENT_SIZE_CHANGED:
        case SDL_WINDOWEVENT_RESIZED:
            ev->type = APP_EVENT_RESIZED;
            ev->width = e->window.data1;
            ev->height = e->window.data2;
            return 1;
        case SDL_WINDOWEVENT_MINIMIZED:
        case SDL_WINDOWEVENT_HIDDEN:
            w->minimized = 1;
            ev->type = APP_EVENT_MINIMIZED;
            return 1;
        case SDL_WINDOWEVENT_RESTORED:
        case SDL_WINDOWEVENT_SHOWN:
        case SDL_WINDOWEVENT_EXPOSED:
        case SDL_WINDOWEVENT_MAXIMIZED:
            if (!w->minimized && e->window.event == SDL_WINDOWEVENT_EXPOSED)
                return 0;
            w->minimized = 0;
            ev->type = APP_EVENT_RESTORED;
            return 1;
        case SDL_WINDOWEVENT_CLOSE:
            ev->type = APP_EVENT_QUIT;
            return 1;
        default:
            return 0;
        }
    default:
        return 0;
    }
}

int window_poll(app_window *w, app_event *ev, int wait_ms)
{
    SDL_Event e;
    int got = wait_ms > 0 ? SDL_WaitEventTimeout(&e, wait_ms) : SDL_PollEvent(&e);
    while (got) {
        if (translate(w, &e, ev))
            return 1;
        got = SDL_PollEvent(&e);
    }
    return 0;
}

/* ---- injection (tests, scripts) -------------------------------------------------------- */

static void push_key(app_window *w, SDL_Keycode k, Uint16 mod)
{
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_KEYDOWN;
    e.key.timestamp = SDL_GetTicks();
    e.key.windowID = SDL_GetWindowID(w->win);
    e.key.state = SDL_PRESSED;
    e.key.keysym.sym = k;
    e.key.keysym.scancode = SDL_GetScancodeFromKey(k);
    e.key.keysym.mod = mod;
    e.key.padding2 = INJECT_MARK;
    SDL_PushEvent(&e);
    e.type = SDL_KEYUP;
    e.key.state = SDL_RELEASED;
    SDL_PushEvent(&e);
}

static void push_button(app_window *w, int down, int b, int x, int y)
{
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = down ? SDL_MOUSEBUTTONDOWN : SDL_MOUSEBUTTONUP;
    e.button.timestamp = SDL_GetTicks();
    e.button.windowID = SDL_GetWindowID(w->win);
    e.button.button = (Uint8)(b == 2   ? SDL_BUTTON_MIDDLE
                              : b == 3 ? SDL_BUTTON_RIGHT
                                       : SDL_BUTTON_LEFT);
    e.button.state = down ? SDL_PRESSED : SDL_RELEASED;
    e.button.clicks = 1;
    e.button.x = x;
    e.button.y = y;
    e.button.padding1 = INJECT_MARK;
    SDL_PushEvent(&e);
}

static void push_motion(app_window *w, int x, int y, int dx, int dy, Uint32 state)
{
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_MOUSEMOTION;
    e.motion.timestamp = SDL_GetTicks();
    e.motion.windowID = SDL_GetWindowID(w->win);
    e.motion.which = (Uint32)INJECT_MARK << 8;
    e.motion.state = state;
    e.motion.x = x;
    e.motion.y = y;
    e.motion.xrel = dx;
    e.motion.yrel = dy;
    SDL_PushEvent(&e);
}

static void push_window(app_window *w, Uint8 what, int d1, int d2)
{
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_WINDOWEVENT;
    e.window.timestamp = SDL_GetTicks();
    e.window.windowID = SDL_GetWindowID(w->win);
    e.window.event = what;
    e.window.data1 = d1;
    e.window.data2 = d2;
    e.window.padding1 = INJECT_MARK;
    SDL_PushEvent(&e);
}

int window_inject(app_window *w, const char *line, char *why, size_t why_size)
{
    char cmd[32] = "", arg[64] = "";
    int a[5] = {0, 0, 0, 0, 0};
    if (sscanf(line, "%31s", cmd) != 1) {
        set_why(why, why_size, "empty line");
        return -1;
    }
    if (strcmp(cmd, "key") == 0) {
        if (sscanf(line, "%*s %63s", arg) != 1) {
            set_why(why, why_size, "key needs a name");
            return -1;
        }
        Uint16 mod = 0;
        char *name = arg;
        for (;;) {
            if (strncmp(name, "shift+", 6) == 0) {
                mod |= KMOD_LSHIFT;
                name += 6;
            } else if (strncmp(name, "ctrl+", 5) == 0) {
                mod |= KMOD_LCTRL;
                name += 5;
            } else {
                break;
            }
        }
        SDL_Keycode k = SDL_GetKeyFromName(name);
        if (k == SDLK_UNKNOWN) {
            set_why(why, why_size, "unknown key name '%s'", name);
            return -1;
        }
        push_key(w, k, mod);
        return 0;
    }
    if (strcmp(cmd, "click") == 0) {
        int n = sscanf(line, "%*s %d %d %d", &a[0], &a[1], &a[2]);
        if (n < 2) {
            set_why(why, why_size, "click X Y [BUTTON]");
            return -1;
        }
        int b = n == 3 ? a[2] : 1;
        push_motion(w, a[0], a[1], 0, 0, 0);
        push_button(w, 1, b, a[0], a[1]);
        push_button(w, 0, b, a[0], a[1]);
        return 0;
    }
    if (strcmp(cmd, "drag") == 0) {
        int n = sscanf(line, "%*s %d %d %d %d %d", &a[0], &a[1], &a[2], &a[3], &a[4]);
        if (n < 4) {
            set_why(why, why_size, "drag X0 Y0 X1 Y1 [BUTTON]");
            return -1;
        }
        int b = n == 5 ? a[4] : 1;
        Uint32 mask = SDL_BUTTON(b == 2   ? SDL_BUTTON_MIDDLE
                                 : b == 3 ? SDL_BUTTON_RIGHT
                                          : SDL_BUTTON_LEFT);
        push_motion(w, a[0], a[1], 0, 0, 0);
        push_button(w, 1, b, a[0], a[1]);
        const int steps = 10;
        int px = a[0], py = a[1];
        for (int i = 1; i <= steps; i++) {
            int x = a[0] + (a[2] - a[0]) * i / steps, y = a[1] + (a[3] - a[1]) * i / steps;
            push_motion(w, x, y, x - px, y - py, mask);
            px = x;
            py = y;
        }
        push_button(w, 0, b, a[2], a[3]);
        return 0;
    }
    if (strcmp(cmd, "move") == 0) {
        if (sscanf(line, "%*s %d %d", &a[0], &a[1]) != 2) {
            set_why(why, why_size, "move X Y");
            return -1;
        }
        push_motion(w, a[0], a[1], 0, 0, 0);
        return 0;
    }
    if (strcmp(cmd, "wheel") == 0) {
        if (sscanf(line, "%*s %d", &a[0]) != 1) {
            set_why(why, why_size, "wheel N");
            return -1;
        }
        SDL_Event e;
        memset(&e, 0, sizeof e);
        e.type = SDL_MOUSEWHEEL;
        e.wheel.timestamp = SDL_GetTicks();
        e.wheel.windowID = SDL_GetWindowID(w->win);
        e.wheel.which = (Uint32)INJECT_MARK << 8;
        e.wheel.y = a[0];
        e.wheel.direction = SDL_MOUSEWHEEL_NORMAL;
        SDL_PushEvent(&e);
        return 0;
    }
    if (strcmp(cmd, "resize") == 0) {
        if (sscanf(line, "%*s %d %d", &a[0], &a[1]) != 2 || a[0] < 1 || a[1] < 1) {
            set_why(why, why_size, "resize W H (W, H >= 1)");
            return -1;
        }
        SDL_SetWindowSize(w->win, a[0], a[1]);
        int ww = a[0], hh = a[1];
        SDL_GetWindowSize(w->win, &ww, &hh);
        push_window(w, SDL_WINDOWEVENT_SIZE_CHANGED, ww, hh);
        return 0;
    }
    if (strcmp(cmd, "minimize") == 0) {
        SDL_MinimizeWindow(w->win);
        push_window(w, SDL_WINDOWEVENT_MINIMIZED, 0, 0);
        return 0;
    }
    if (strcmp(cmd, "restore") == 0) {
        SDL_RestoreWindow(w->win);
        push_window(w, SDL_WINDOWEVENT_RESTORED, 0, 0);
        return 0;
    }
    if (strcmp(cmd, "quit") == 0) {
        SDL_Event e;
        memset(&e, 0, sizeof e);
        e.type = SDL_QUIT;
        SDL_PushEvent(&e);
        return 0;
    }
    set_why(why, why_size, "unknown command '%s'", cmd);
    return -1;
}
