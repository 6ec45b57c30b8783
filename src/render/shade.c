/* SPDX-License-Identifier: MIT */
/* Colours of the lit mode: the underwater background gradient (also the fog colour), the
 * per-instance colour (by speed or by group), flat Lambert + ambient with one fixed light,
 * and linear depth fog. Everything is folded per instance into colour = a + b * max(0, n.l)
 * so that a triangle's colour costs one dot product. Scalar, shared by every ISA. */
#include "render/render_internal.h"

#include <math.h>

/* Light from above, a little from the front and right (world space, normalised below). */
static const float light_dir[3] = {0.3f, 1.0f, 0.45f};
const float shade_ambient = 0.38f, shade_diffuse = 0.70f;

static const float bg_top[3] = {46.0f, 128.0f, 160.0f};
static const float bg_bottom[3] = {4.0f, 22.0f, 48.0f};

/* slow: steel blue, middle: silver, fast: warm orange */
const float shade_speed_stops[3][3] = {
    {70.0f, 120.0f, 200.0f}, {205.0f, 210.0f, 215.0f}, {255.0f, 150.0f, 50.0f}};

static const float group_palette[8][3] = {{235.0f, 120.0f, 60.0f},  {90.0f, 170.0f, 230.0f},
                                          {240.0f, 210.0f, 80.0f},  {120.0f, 210.0f, 140.0f},
                                          {220.0f, 110.0f, 170.0f}, {200.0f, 200.0f, 210.0f},
                                          {160.0f, 120.0f, 230.0f}, {250.0f, 160.0f, 140.0f}};

void shade_background(uint32_t *bg_row, int height, int id_mode)
{
    for (int y = 0; y < height; y++) {
        if (id_mode) {
            bg_row[y] = 0xFF000000u;
            continue;
        }
        float t = height > 1 ? (float)y / (float)(height - 1) : 0.0f;
        t = t * t * (3.0f - 2.0f * t) * 0.6f + t * 0.4f; /* eased: light near the surface */
        uint32_t c = 0xFF000000u;
        for (int ch = 0; ch < 3; ch++) {
            float v = bg_top[ch] + (bg_bottom[ch] - bg_top[ch]) * t;
            c |= (uint32_t)(int)(v + 0.5f) << (16 - 8 * ch);
        }
        bg_row[y] = c;
    }
}

int shade_base_fixed(const shoal_render_instances *inst, size_t i, float base[3])
{
    if (inst->color && (inst->color[i] >> 24) != 0) {
        uint32_t c = inst->color[i];
        base[0] = (float)((c >> 16) & 255);
        base[1] = (float)((c >> 8) & 255);
        base[2] = (float)(c & 255);
        return 1;
    }
    if (inst->group) {
        const float *g = group_palette[inst->group[i] & 7];
        base[0] = g[0];
        base[1] = g[1];
        base[2] = g[2];
        return 1;
    }
    return 0;
}

void shade_light(float L[3])
{
    float l2 =
        light_dir[0] * light_dir[0] + light_dir[1] * light_dir[1] + light_dir[2] * light_dir[2];
    float li = 1.0f / sqrtf(l2);
    L[0] = light_dir[0] * li;
    L[1] = light_dir[1] * li;
    L[2] = light_dir[2] * li;
}

void shade_instance(const frame_consts *fc, const shoal_render_instances *inst, size_t i,
                    const float rot[9], float win_y_px, shade_inst *out)
{
    float base[3];
    if (!shade_base_fixed(inst, i, base)) {
        float s2 =
            inst->vx[i] * inst->vx[i] + inst->vy[i] * inst->vy[i] + inst->vz[i] * inst->vz[i];
        float t = fc->max_speed > 0.0f ? sqrtf(s2) / fc->max_speed : 0.0f;
        t = t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
        int seg = t < 0.5f ? 0 : 1;
        float u = t < 0.5f ? t * 2.0f : (t - 0.5f) * 2.0f;
        for (int ch = 0; ch < 3; ch++)
            base[ch] = shade_speed_stops[seg][ch] +
                       (shade_speed_stops[seg + 1][ch] - shade_speed_stops[seg][ch]) * u;
    }
    float dx = inst->px[i] - fc->eye[0], dy = inst->py[i] - fc->eye[1],
          dz = inst->pz[i] - fc->eye[2];
    float dist = sqrtf(dx * dx + dy * dy + dz * dz);
    float f = (dist - fc->fog_start) / (fc->fog_end - fc->fog_start);
    f = f < 0.0f ? 0.0f : f > 1.0f ? 1.0f : f;
    f *= fc->fog_max;
    int row = render_cvtt(win_y_px);
    row = row < 0 ? 0 : row >= fc->height ? fc->height - 1 : row;
    uint32_t bg = fc->bg_row[row];
    float fog[3] = {(float)((bg >> 16) & 255), (float)((bg >> 8) & 255), (float)(bg & 255)};
    for (int ch = 0; ch < 3; ch++) {
        out->a[ch] = base[ch] * shade_ambient * (1.0f - f) + fog[ch] * f;
        out->b[ch] = base[ch] * shade_diffuse * (1.0f - f);
    }
    /* n_world . l = (R n) . l = n . (R^T l) */
    float L[3];
    shade_light(L);
    for (int c = 0; c < 3; c++)
        out->light_model[c] = rot[0 * 3 + c] * L[0] + rot[1 * 3 + c] * L[1] + rot[2 * 3 + c] * L[2];
}
