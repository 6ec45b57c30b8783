/* SPDX-License-Identifier: MIT */
/* The obstacle field of seed 004 (src/sim/field.c): construction against a hand-computed
 * two-vertex case (every cell checked), the transform (translate, scale, Euler order),
 * sampling outside the grid, rebuild on move, the field as a force on a boid, OBJ normals
 * (read from `vn`, computed when absent), scene [mesh] sections and their errors, and an
 * obstacle field of its own lent to simulations (shoal_obstacles). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "shoal/render.h"
#include "shoal/shoal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static shoal_sim *make_sim(shoal_model model, size_t n, float cell, float margin)
{
    shoal_sim_desc d = shoal_sim_desc_default();
    d.model = model;
    shoal_params_default(model, &d.params);
    d.params.field_cell = cell;
    d.params.field_margin = margin;
    d.boid_count = n;
    d.thread_count = 1;
    shoal_sim *s;
    shoal_error e;
    if (shoal_sim_create(&d, &s, &e))
        fail_msg("%s", e.message);
    return s;
}

/* v0 = (0.5, 0.5, 0.5) with n0 = (0.6, 0.8, 0); v1 = (2.5, 1.5, 0.5) with n1 = (0, 0, -1). */
static const float tri_pos[6] = {0.5f, 0.5f, 0.5f, 2.5f, 1.5f, 0.5f};
static const float tri_nrm[6] = {0.6f, 0.8f, 0.0f, 0.0f, 0.0f, -1.0f};

static const float *cell_at(const shoal_field_view *f, int x, int y, int z)
{
    return f->vectors + 3 * (x + f->dims[0] * (y + f->dims[1] * z));
}

static void test_hand_computed(void **state)
{
    (void)state;
    shoal_sim *s = make_sim(SHOAL_MODEL_STEER, 4, 1.0f, 0.0f);
    shoal_error e;
    size_t idx = 99;
    assert_int_equal(shoal_sim_add_obstacle(s, tri_pos, tri_nrm, 2, NULL, &idx, &e), SHOAL_OK);
    assert_int_equal(idx, 0);
    shoal_field_view f = shoal_sim_field(s);
    /* bounds: the vertices, margin 0; dims = floor(extent / cell) + 1 */
    assert_true(f.origin[0] == 0.5f && f.origin[1] == 0.5f && f.origin[2] == 0.5f);
    assert_true(f.cell_size == 1.0f);
    assert_int_equal(f.dims[0], 3);
    assert_int_equal(f.dims[1], 2);
    assert_int_equal(f.dims[2], 1);
    assert_int_equal(f.builds, 1);
    /* expected, by the rule of MODELS.md:
     *  v0 in cell (0,0,0): its normal there; n0.x > 0 -> cell (1,0,0) gets n0 * 0.6;
     *  n0.y > 0 -> cell (0,1,0) gets n0 * 0.8; n0.z == 0 adds nothing.
     *  v1 in cell (2,1,0): its normal there; n1.z < 0 -> cell (2,1,-1) is outside: nothing. */
    float want[3][2][3];
    memset(want, 0, sizeof want);
    want[0][0][0] = 0.6f;
    want[0][0][1] = 0.8f;
    want[1][0][0] = 0.6f * 0.6f;
    want[1][0][1] = 0.8f * 0.6f;
    want[0][1][0] = 0.6f * 0.8f;
    want[0][1][1] = 0.8f * 0.8f;
    want[2][1][2] = -1.0f;
    for (int x = 0; x < 3; x++)
        for (int y = 0; y < 2; y++)
            for (int c = 0; c < 3; c++) {
                float got = cell_at(&f, x, y, 0)[c];
                if (got != want[x][y][c])
                    fail_msg("cell (%d,%d,0)[%d] = %.9g, want %.9g", x, y, c, (double)got,
                             (double)want[x][y][c]);
            }
    /* sampling: a boid's cell; outside the grid (and on its upper faces) 0 */
    float p[3] = {0.99f, 0.5f, 1.49f}, v[3];
    shoal_sim_field_sample(s, p, v);
    assert_true(v[0] == 0.6f && v[1] == 0.8f && v[2] == 0.0f);
    const float outside[][3] = {{-5, 0, 0},   {0.49f, 0.6f, 0.6f}, {3.5f, 0.6f, 0.6f},
                                {1, 1, 1.5f}, {NAN, 1, 1},         {1e30f, 1, 1}};
    for (size_t k = 0; k < sizeof outside / sizeof outside[0]; k++) {
        shoal_sim_field_sample(s, outside[k], v);
        assert_true(v[0] == 0.0f && v[1] == 0.0f && v[2] == 0.0f);
    }
    p[0] = 3.49f;
    p[1] = 2.49f;
    p[2] = 0.5f;
    shoal_sim_field_sample(s, p, v);
    assert_true(v[2] == -1.0f);
    shoal_sim_destroy(s);
}

static void test_transform_and_move(void **state)
{
    (void)state;
    /* Euler order z, x, y (Unity): a z rotation of 90 degrees takes x to y */
    shoal_transform t = shoal_transform_identity();
    t.rotation_deg[2] = 90.0f;
    float in[3] = {1, 0, 0}, out[3];
    shoal_transform_apply(&t, in, 1, out);
    assert_true(fabsf(out[0]) < 1e-6f && fabsf(out[1] - 1.0f) < 1e-6f && fabsf(out[2]) < 1e-6f);
    /* x then y: (0,0,1) rotated 90 about x goes to (0,-1,0), then about y stays */
    t = shoal_transform_identity();
    t.rotation_deg[0] = 90.0f;
    t.rotation_deg[1] = 90.0f;
    float z[3] = {0, 0, 1};
    shoal_transform_apply(&t, z, 1, out);
    assert_true(fabsf(out[0]) < 1e-6f && fabsf(out[1] + 1.0f) < 1e-6f && fabsf(out[2]) < 1e-6f);
    /* seed 004 order: rotate, scale per world axis, translate; normals rotate only */
    t = shoal_transform_identity();
    t.position[0] = 10;
    t.scale[0] = t.scale[1] = t.scale[2] = 2;
    shoal_sim *s = make_sim(SHOAL_MODEL_FOV, 4, 1.0f, 0.0f);
    shoal_error e;
    assert_int_equal(shoal_sim_add_obstacle(s, tri_pos, tri_nrm, 2, &t, NULL, &e), SHOAL_OK);
    shoal_field_view f = shoal_sim_field(s);
    assert_true(f.origin[0] == 11.0f && f.origin[1] == 1.0f && f.origin[2] == 1.0f);
    assert_int_equal(f.dims[0], 5);
    assert_int_equal(f.dims[1], 3);
    assert_int_equal(f.dims[2], 1);
    assert_true(cell_at(&f, 0, 0, 0)[0] == 0.6f && cell_at(&f, 0, 0, 0)[1] == 0.8f);
    assert_true(cell_at(&f, 4, 2, 0)[2] == -1.0f);
    /* move: rebuilt at the new place, the old place is empty */
    uint64_t b0 = f.builds;
    shoal_transform m = shoal_transform_identity();
    m.position[1] = -20;
    assert_int_equal(shoal_sim_move_obstacle(s, 0, &m, &e), SHOAL_OK);
    f = shoal_sim_field(s);
    assert_int_equal(f.builds, b0 + 1);
    assert_true(f.origin[1] == -19.5f);
    float p[3] = {11.2f, 1.2f, 1.2f}, v[3];
    shoal_sim_field_sample(s, p, v);
    assert_true(v[0] == 0.0f && v[1] == 0.0f);
    float q[3] = {0.7f, -19.3f, 0.6f};
    shoal_sim_field_sample(s, q, v);
    assert_true(v[0] == 0.6f && v[1] == 0.8f);
    assert_true(shoal_sim_obstacle_transform(s, 0).position[1] == -20.0f);
    /* bad moves leave it as it was */
    m.position[0] = NAN;
    assert_int_equal(shoal_sim_move_obstacle(s, 0, &m, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "finite"));
    assert_int_equal(shoal_sim_move_obstacle(s, 3, &m, &e), SHOAL_ERR_INPUT);
    assert_int_equal(shoal_sim_field(s).builds, b0 + 1);
    /* a field larger than the limit: a clear error, the old field kept */
    shoal_params prm = shoal_sim_get_desc(s)->params;
    prm.field_cell = 0.001f;
    prm.field_margin = 100;
    assert_int_equal(shoal_sim_set_params(s, &prm, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "field_cell"));
    assert_int_equal(shoal_sim_field(s).builds, b0 + 1);
    shoal_sim_destroy(s);
}

/* The field pushes a boid: fov, one boid, no neighbours, boundary far away. */
static void test_field_force(void **state)
{
    (void)state;
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        float rows[6] = {0.7f, 0.7f, 0.7f, 0.0f, 0.0f, 0.1f};
        float with[6], without[6];
        for (int k = 0; k < 2; k++) {
            shoal_sim_desc d = shoal_sim_desc_default();
            d.model = (shoal_model)m;
            shoal_params_default(d.model, &d.params);
            d.params.avoid_force = 5;
            d.params.field_margin = 0;
            d.boid_count = 1;
            shoal_sim *s;
            shoal_error e;
            assert_int_equal(shoal_sim_create(&d, &s, &e), SHOAL_OK);
            assert_int_equal(shoal_sim_set_state(s, rows, &e), SHOAL_OK);
            if (k == 0)
                assert_int_equal(shoal_sim_add_obstacle(s, tri_pos, tri_nrm, 2, NULL, NULL, &e),
                                 SHOAL_OK);
            assert_int_equal(shoal_sim_step(s, 1, &e), SHOAL_OK);
            shoal_sim_get_state(s, k == 0 ? with : without);
            shoal_sim_destroy(s);
        }
        /* the field vector at the boid is (0.6, 0.8, 0): x and y velocity grow */
        if (!(with[3] > without[3] && with[4] > without[4]))
            fail_msg("model %s: field did not push (%g %g vs %g %g)",
                     shoal_model_name((shoal_model)m), (double)with[3], (double)with[4],
                     (double)without[3], (double)without[4]);
    }
}

static void test_obj_normals(void **state)
{
    (void)state;
    shoal_mesh mesh;
    shoal_error e;
    /* a tetrahedron without vn: normals computed from the faces, pointing outward */
    const char *tet = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\n"
                      "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n";
    assert_int_equal(shoal_mesh_parse(tet, strlen(tet), "tet.obj", &mesh, &e), SHOAL_OK);
    assert_null(mesh.normals);
    assert_int_equal(shoal_mesh_compute_normals(&mesh, &e), SHOAL_OK);
    const float *n = mesh.normals;
    float k = 1.0f / sqrtf(3.0f);
    assert_true(fabsf(n[0] + k) < 1e-6f && fabsf(n[1] + k) < 1e-6f && fabsf(n[2] + k) < 1e-6f);
    shoal_mesh_free(&mesh);
    /* vn read, normalised, per position */
    const char *tri = "v 0 0 0\nv 1 0 0\nv 0 1 0\nvn 0 0 2\nvn 1 0 0\nf 1//1 2//1 3//2\n";
    assert_int_equal(shoal_mesh_parse(tri, strlen(tri), "tri.obj", &mesh, &e), SHOAL_OK);
    assert_non_null(mesh.normals);
    assert_true(mesh.normals[2] == 1.0f && mesh.normals[5] == 1.0f && mesh.normals[6] == 1.0f);
    shoal_mesh_free(&mesh);
    const char *bad = "v 0 0 0\nv 1 0 0\nv 0 1 0\nvn 0 0 1\nf 1//1 2//2 3//1\n";
    assert_int_equal(shoal_mesh_parse(bad, strlen(bad), "bad.obj", &mesh, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "normal index"));
    /* the shipped rock has a normal per vertex */
    assert_int_equal(shoal_mesh_load(SHOAL_SOURCE_ROOT "/assets/rock.obj", &mesh, &e), SHOAL_OK);
    assert_non_null(mesh.normals);
    assert_true(mesh.vertex_count >= 100);
    shoal_mesh_free(&mesh);
}

static void test_scene_meshes(void **state)
{
    (void)state;
    shoal_scene sc;
    shoal_error e;
    assert_int_equal(
        shoal_scene_load(SHOAL_SOURCE_ROOT "/assets/scenes/steer_rock_mesh.ini", &sc, &e),
        SHOAL_OK);
    assert_int_equal(sc.mesh_count, 1);
    assert_non_null(strstr(sc.meshes[0].path, "assets/scenes/../rock.obj"));
    shoal_sim_desc d = sc.desc;
    d.boid_count = 64;
    shoal_sim *s;
    assert_int_equal(shoal_sim_create(&d, &s, &e), SHOAL_OK);
    assert_int_equal(shoal_scene_add_obstacles(&sc, s, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_obstacle_count(s), 1);
    assert_non_null(shoal_sim_field(s).vectors);
    shoal_sim_destroy(s);

    const char *txt = "[scene]\nmodel = fov\n[mesh a]\nfile = /x/a.obj\nposition = 1,2,3\n"
                      "rotation = 0,90,0\nscale = 2\n[mesh b]\nfile = b.obj\nscale = 1,2,3\n"
                      "[predators]\ncount = 3\nchase = centre\nstart = 0,0,9\n";
    assert_int_equal(shoal_scene_parse(txt, "t.ini", &sc, &e), SHOAL_OK);
    assert_int_equal(sc.mesh_count, 2);
    assert_string_equal(sc.meshes[0].name, "a");
    assert_string_equal(sc.meshes[0].path, "/x/a.obj");
    assert_true(sc.meshes[0].transform.position[2] == 3.0f);
    assert_true(sc.meshes[0].transform.rotation_deg[1] == 90.0f);
    assert_true(sc.meshes[0].transform.scale[1] == 2.0f);
    assert_true(sc.meshes[1].transform.scale[2] == 3.0f);
    assert_true(sc.desc.params.predator_count == 3.0f);
    assert_true(sc.desc.params.predator_chase == 1.0f);
    assert_true(sc.desc.params.predator_start[2] == 9.0f);

    struct {
        const char *text, *expect;
    } bad[] = {
        {"[mesh r]\nposition = 1,2,3\n", "needs a file"},
        {"[mesh r]\nfile = a.obj\nposition = nan,0,0\n", "position"},
        {"[mesh r]\nfile = a.obj\nrotation = 1,2\n", "rotation"},
        {"[mesh r]\nfile = a.obj\nscale = inf\n", "scale"},
        {"[mesh r]\nfile = a.obj\ncolour = red\n", "unknown key"},
        {"[predators]\ncount = 65\n", "predator_count"},
        {"[predators]\nchase = slowest\n", "nearest or centre"},
        {"[predators]\nhunger = 2\n", "unknown key"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        shoal_status st = shoal_scene_parse(bad[i].text, "bad.ini", &sc, &e);
        if (st != SHOAL_ERR_INPUT || !strstr(e.message, bad[i].expect))
            fail_msg("case %zu: status %d, message '%s' (expected '%s')", i, (int)st, e.message,
                     bad[i].expect);
        assert_null(strchr(e.message, '\n'));
    }
    /* a missing OBJ: the error names the scene, the section and the file */
    assert_int_equal(
        shoal_scene_parse("[mesh rock]\nfile = /nonexistent/rock.obj\n", "m.ini", &sc, &e),
        SHOAL_OK);
    assert_int_equal(shoal_sim_create(&sc.desc, &s, &e), SHOAL_OK);
    assert_int_equal(shoal_scene_add_obstacles(&sc, s, &e), SHOAL_ERR_IO);
    assert_non_null(strstr(e.message, "m.ini: [mesh rock]"));
    assert_non_null(strstr(e.message, "/nonexistent/rock.obj"));
    shoal_sim_destroy(s);
}

static int same_field(shoal_field_view a, shoal_field_view b)
{
    if (memcmp(a.origin, b.origin, sizeof a.origin) || a.cell_size != b.cell_size ||
        memcmp(a.dims, b.dims, sizeof a.dims) || !a.vectors != !b.vectors)
        return 0;
    size_t n = 3 * (size_t)a.dims[0] * (size_t)a.dims[1] * (size_t)a.dims[2];
    return !a.vectors || memcmp(a.vectors, b.vectors, n * sizeof(float)) == 0;
}

/* An obstacle field of its own (shoal_obstacles), lent to sims (issue 37 item 7): the field
 * a sim builds from the same meshes, bit for bit, copied when the cell and margin agree and
 * built again with the sim's when they do not; the object may go after lending; a step
 * gives the bits of a sim that loaded the scene itself; NULL removes the field; errors. */
static void test_obstacles_lent(void **state)
{
    (void)state;
    shoal_error e;
    shoal_params prm;
    shoal_params_default(SHOAL_MODEL_STEER, &prm);
    prm.field_cell = 1.0f;
    prm.field_margin = 1.0f;
    shoal_obstacles *o;
    assert_int_equal(shoal_obstacles_create(&prm, &o, &e), SHOAL_OK);
    assert_int_equal(shoal_obstacles_count(o), 0);
    assert_null(shoal_obstacles_field(o).vectors);
    size_t idx = 9;
    assert_int_equal(shoal_obstacles_add(o, tri_pos, tri_nrm, 2, NULL, &idx, &e), SHOAL_OK);
    assert_int_equal(idx, 0);
    shoal_sim *own = make_sim(SHOAL_MODEL_STEER, 8, 1.0f, 1.0f);
    assert_int_equal(shoal_sim_add_obstacle(own, tri_pos, tri_nrm, 2, NULL, NULL, &e), SHOAL_OK);
    assert_true(same_field(shoal_obstacles_field(o), shoal_sim_field(own)));

    /* lent to a sim of the same cell and margin: the same field; then moved on both */
    shoal_sim *lent = make_sim(SHOAL_MODEL_STEER, 8, 1.0f, 1.0f);
    assert_int_equal(shoal_sim_set_obstacles(lent, o, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_obstacle_count(lent), 1);
    assert_true(same_field(shoal_sim_field(lent), shoal_sim_field(own)));
    shoal_transform t = shoal_transform_identity();
    t.position[0] = 1.5f;
    t.rotation_deg[1] = 30.0f;
    assert_int_equal(shoal_obstacles_move(o, 0, &t, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_move_obstacle(own, 0, &t, &e), SHOAL_OK);
    assert_false(same_field(shoal_sim_field(lent), shoal_sim_field(own))); /* a copy */
    assert_int_equal(shoal_sim_set_obstacles(lent, o, &e), SHOAL_OK);
    assert_true(same_field(shoal_sim_field(lent), shoal_sim_field(own)));
    assert_true(shoal_sim_obstacle_transform(lent, 0).position[0] == 1.5f);

    /* a sim of another cell size builds the field with its own */
    shoal_sim *fine = make_sim(SHOAL_MODEL_STEER, 8, 0.5f, 1.0f);
    shoal_sim *fine_own = make_sim(SHOAL_MODEL_STEER, 8, 0.5f, 1.0f);
    assert_int_equal(shoal_sim_set_obstacles(fine, o, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_add_obstacle(fine_own, tri_pos, tri_nrm, 2, &t, NULL, &e), SHOAL_OK);
    assert_true(shoal_sim_field(fine).cell_size == 0.5f);
    assert_true(same_field(shoal_sim_field(fine), shoal_sim_field(fine_own)));
    shoal_obstacles_destroy(o); /* lent: the sims keep their copies */
    assert_true(same_field(shoal_sim_field(fine), shoal_sim_field(fine_own)));
    /* NULL removes the field */
    uint64_t builds = shoal_sim_field(fine).builds;
    assert_int_equal(shoal_sim_set_obstacles(fine, NULL, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_obstacle_count(fine), 0);
    assert_null(shoal_sim_field(fine).vectors);
    assert_true(shoal_sim_field(fine).builds > builds);

    /* errors: as shoal_sim_add_obstacle's, nothing changed */
    assert_int_equal(shoal_obstacles_create(&prm, &o, &e), SHOAL_OK);
    float bad[6] = {0, 0, 0, NAN, 0, 0};
    assert_int_equal(shoal_obstacles_add(o, bad, tri_nrm, 2, NULL, NULL, &e), SHOAL_ERR_INPUT);
    assert_int_equal(shoal_obstacles_count(o), 0);
    assert_int_equal(shoal_obstacles_move(o, 0, &t, &e), SHOAL_ERR_INPUT);
    shoal_obstacles_destroy(o);
    shoal_params zero = prm;
    zero.field_cell = 0;
    o = (shoal_obstacles *)1;
    assert_int_equal(shoal_obstacles_create(&zero, &o, &e), SHOAL_ERR_INPUT);
    assert_null(o);
    shoal_sim_destroy(own);
    shoal_sim_destroy(lent);
    shoal_sim_destroy(fine);
    shoal_sim_destroy(fine_own);

    /* a scene's meshes as a lent field: a step gives the bits of a sim that loaded them */
    shoal_scene sc;
    assert_int_equal(
        shoal_scene_load(SHOAL_SOURCE_ROOT "/assets/scenes/steer_rock_mesh.ini", &sc, &e),
        SHOAL_OK);
    shoal_sim_desc d = sc.desc;
    d.boid_count = 500;
    d.thread_count = 2;
    shoal_sim *a, *b;
    assert_int_equal(shoal_sim_create(&d, &a, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_create(&d, &b, &e), SHOAL_OK);
    assert_int_equal(shoal_scene_add_obstacles(&sc, a, &e), SHOAL_OK);
    assert_int_equal(shoal_scene_make_obstacles(&sc, &o, &e), SHOAL_OK);
    assert_int_equal(shoal_obstacles_count(o), 1);
    assert_int_equal(shoal_sim_set_obstacles(b, o, &e), SHOAL_OK);
    shoal_obstacles_destroy(o);
    assert_int_equal(shoal_sim_draw_state(a, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_draw_state(b, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_step(a, 60, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_step(b, 60, &e), SHOAL_OK);
    float ra[500 * 6], rb[500 * 6];
    assert_int_equal(shoal_sim_get_rows(a, ra, 500, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_get_rows(b, rb, 500, &e), SHOAL_OK);
    assert_memory_equal(ra, rb, sizeof ra);
    shoal_sim_destroy(a);
    shoal_sim_destroy(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_computed), cmocka_unit_test(test_transform_and_move),
        cmocka_unit_test(test_field_force),   cmocka_unit_test(test_obj_normals),
        cmocka_unit_test(test_scene_meshes),  cmocka_unit_test(test_obstacles_lent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
