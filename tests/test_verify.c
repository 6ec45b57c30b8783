/* SPDX-License-Identifier: MIT */
/* shoal_verify and `shoal verify` (shoal/verify.h, docs/VERIFY.md), with shoal's own float32
 * engine as the outside program (the NumPy transcriptions of the seeds are
 * tests/test_verify_seeds.sh's; the CUDA backend's atomic order is test_gpu's):
 * - the engine in the reference's order is bit-identical ("agrees", error 0); in another order
 *   (brute force: row order) it agrees within the bound, for every model with spheres, a mesh
 *   and predators, against both references;
 * - the engine with one parameter changed is "rule differs", naming the term, the parameter
 *   and a fitted value that holds the true one, for weights, radii, squared distances, view
 *   cones, terms left out and dt;
 * - a strictness flip on a lattice (a neighbour exactly on the radius) is named as such, both
 *   ways; a neighbour a float step past the radius is a threshold tie;
 * - the program: shoal's trajectory directories, numbered .npy and Unity .bin files, (T, N, 7)
 *   arrays with shuffled rows, --ids, the CSV and JSON reports, exit codes, and every refusal
 *   of bad input (exit 2, one line, no output written). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "shoal/shoal.h"
#include "support/json.h"
#include "tests/cli_harness.h"
#include "tests/scenes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static float *initial(const shoal_sim_desc *d, uint64_t seed)
{
    shoal_sim *s;
    shoal_error e;
    shoal_sim_desc ds = *d;
    ds.seed = seed; /* draws the rows (the caller's desc keeps its own seed) */
    if (shoal_sim_create(&ds, &s, &e) || shoal_sim_draw_state(s, &e))
        fail_msg("%s", e.message);
    float *rows = malloc(d->boid_count * 6 * sizeof(float));
    assert_int_equal(shoal_sim_get_rows(s, rows, shoal_sim_count(s), NULL), SHOAL_OK);
    shoal_sim_destroy(s);
    return rows;
}

/* T + 1 states of the float32 engine (desc `out`, the scene's meshes) from rows, as doubles */
static double *engine_trajectory(const shoal_sim_desc *out, const shoal_scene *sc,
                                 const float *rows, int steps)
{
    shoal_error e;
    shoal_sim *s;
    assert_int_equal(shoal_sim_create(out, &s, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_set_rows(s, rows, shoal_sim_count(s), &e), SHOAL_OK);
    if (sc)
        assert_int_equal(shoal_scene_add_obstacles(sc, s, &e), SHOAL_OK);
    size_t n = out->boid_count;
    double *t = malloc((size_t)(steps + 1) * n * 6 * sizeof(double));
    float *f = malloc(n * 6 * sizeof(float));
    for (int k = 0; k <= steps; k++) {
        if (k)
            assert_int_equal(shoal_sim_step(s, 1, &e), SHOAL_OK);
        assert_int_equal(shoal_sim_get_rows(s, f, shoal_sim_count(s), NULL), SHOAL_OK);
        for (size_t i = 0; i < n * 6; i++)
            t[(size_t)k * n * 6 + i] = f[i];
    }
    free(f);
    shoal_sim_destroy(s);
    return t;
}

/* verify `steps` pairs of a trajectory against contract `d`; the reports in rep[] */
static void verify_run(const shoal_sim_desc *d, const shoal_scene *sc, shoal_verify_reference ref,
                       const double *traj, int steps, shoal_verify_report *rep)
{
    shoal_error e;
    shoal_verify_desc vd = shoal_verify_desc_default();
    vd.sim = *d;
    vd.reference = ref;
    shoal_verify *v;
    assert_int_equal(shoal_verify_create(&vd, &v, &e), SHOAL_OK);
    if (sc && sc->mesh_count) {
        shoal_sim *h;
        shoal_sim_desc one = *d;
        one.boid_count = 1;
        assert_int_equal(shoal_sim_create(&one, &h, &e), SHOAL_OK);
        assert_int_equal(shoal_scene_add_obstacles(sc, h, &e), SHOAL_OK);
        assert_int_equal(shoal_verify_copy_obstacles(v, h, &e), SHOAL_OK);
        shoal_sim_destroy(h);
    }
    size_t n = d->boid_count;
    for (int k = 0; k < steps; k++)
        if (shoal_verify_step(v, traj + (size_t)k * n * 6, traj + (size_t)(k + 1) * n * 6, &rep[k],
                              &e))
            fail_msg("%s", e.message);
    shoal_verify_destroy(v);
}

/* ---- the engine as the outside program ------------------------------------------------- */

/* whether model m's table has parameter `name` (the tests pick settings by what a model's
 * table has, not by its name, so a new model is tested without an edit here) */
static int has_param(shoal_model m, const char *name)
{
    size_t n;
    const shoal_param_info *list = shoal_params_list(m, &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i].name, name) == 0)
            return 1;
    return 0;
}

static shoal_scene scene_of(shoal_model m, int extras)
{
    char text[2048];
    /* a school in a ball with walls (steer, average): spread it, a smaller box; a boundary
     * sphere (fov): a smaller one */
    snprintf(text, sizeof text, "[scene]\nmodel = %s\ncount = 800\nseed = 5\n[params]\n%s%s",
             shoal_model_name(m),
             has_param(m, "init_vel_radius") && has_param(m, "wall_size_x")
                 ? "init_pos_radius = 6\ninit_vel_radius = 2\n"
                   "wall_size = 10,10,10\n"
             : has_param(m, "boundary_range2") ? "boundary_range2 = 100\n"
                                               : "",
             extras ? "avoid_force = 4\nfield_cell = 1\nfield_margin = 1.5\n"
                      "[sphere a]\ncenter = 2,1,0\nradius = 1.5\n"
                      "[mesh rock]\nfile = " SHOAL_SOURCE_ROOT "/assets/rock.obj\n"
                      "position = 1,0,0\nrotation = 0,20,10\nscale = 3\n"
                      "[predators]\ncount = 2\nspeed = 6\nturn = 2\nchase = nearest\n"
                      "flee_radius = 4\nflee_weight = 6\nstart = 0,0,3\nspread = 4\n"
                    : "");
    shoal_scene sc;
    shoal_error e;
    if (shoal_scene_parse(text, "verify", &sc, &e))
        fail_msg("%s", e.message);
    return sc;
}

static void test_engine_orders(void **state)
{
    (void)state;
    /* 2 steps under the sanitizers: the first steps take every path of verify and the engine;
     * the gcc and coverage suites check 4 */
    const int steps = TEST_SAN(4, 2);
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        shoal_scene sc = scene_of((shoal_model)m, 1);
        float *rows = initial(&sc.desc, 7);
        for (int brute = 0; brute < 2; brute++) {
            shoal_sim_desc od = sc.desc;
            od.neighbors = brute ? SHOAL_NEIGHBORS_BRUTE : SHOAL_NEIGHBORS_GRID;
            double *t = engine_trajectory(&od, &sc, rows, steps);
            for (int ref = 0; ref < 2; ref++) {
                shoal_verify_report rep[4];
                verify_run(&sc.desc, &sc, ref ? SHOAL_VERIFY_F64 : SHOAL_VERIFY_F32, t, steps, rep);
                double worst = 0;
                for (int k = 0; k < steps; k++) {
                    if (rep[k].verdict != SHOAL_VERDICT_AGREES &&
                        rep[k].verdict != SHOAL_VERDICT_TIE)
                        fail_msg("%s %s vs %s step %d: %s %s", shoal_model_name((shoal_model)m),
                                 brute ? "brute" : "grid", ref ? "f64" : "f32", k,
                                 shoal_verdict_name(rep[k].verdict), rep[k].detail);
                    if (!brute && !ref) /* the reference's own order: the same bits */
                        assert_true(rep[k].pos_max == 0 && rep[k].vel_max == 0);
                    worst = fmax(worst, rep[k].ratio_max);
                }
                printf("%-8s %-5s order vs %s: agrees, worst %.3g of the tolerance\n",
                       shoal_model_name((shoal_model)m), brute ? "brute" : "grid",
                       ref ? "f64" : "f32", worst);
            }
            free(t);
        }
        free(rows);
    }
}

typedef struct planted {
    shoal_model model;
    int extras;
    const char *param, *value; /* the outside program's */
    shoal_term term;
    const char *fitted_param; /* what verify should name */
    double truth;             /* the value it should fit (radii: the radius; cones: the angle) */
    double tol;               /* how close (absolute) */
} planted;

static void test_planted(void **state)
{
    (void)state;
    static const planted cases[] = {
        {SHOAL_MODEL_STEER, 0, "sep_radius", "1.3", SHOAL_TERM_SEPARATION, "sep_radius", 1.3, 1e-3},
        {SHOAL_MODEL_STEER, 0, "coh_weight", "1.7", SHOAL_TERM_COHESION, "coh_weight", 1.7, 1e-4},
        {SHOAL_MODEL_STEER, 0, "wall_weight", "0", SHOAL_TERM_WALLS, "wall_weight", 0, 0},
        {SHOAL_MODEL_STEER, 1, "flee_weight", "3", SHOAL_TERM_PREDATORS, "flee_weight", 3, 1e-3},
        {SHOAL_MODEL_STEER, 1, "avoid_force", "8", SHOAL_TERM_OBSTACLES, "avoid_force", 8, 1e-3},
        {SHOAL_MODEL_STEER, 0, "dt", "0.02", SHOAL_TERM_INTEGRATION, "dt", 0.02, 1e-6},
        {SHOAL_MODEL_AVERAGE, 0, "ali_radius", "3", SHOAL_TERM_ALIGNMENT, "ali_radius", 3, 2e-3},
        {SHOAL_MODEL_AVERAGE, 0, "max_steer", "2", SHOAL_TERM_INTEGRATION, "max_steer", 2, 1e-3},
        {SHOAL_MODEL_HEADING, 0, "neighbor_radius", "2.3", SHOAL_TERM_NEIGHBORS, "neighbor_radius",
         2.3, 5e-3},
        {SHOAL_MODEL_HEADING, 0, "target_weight", "2", SHOAL_TERM_TARGETS, "target_weight", 2,
         1e-3},
        {SHOAL_MODEL_CLASSIC, 0, "fov", "4", SHOAL_TERM_NEIGHBORS, "fov", 4, 5e-3},
        {SHOAL_MODEL_CLASSIC, 0, "w1", "7", SHOAL_TERM_SEPARATION, "w1", 7, 1e-3},
        {SHOAL_MODEL_FOV, 0, "sep_dist2", "2", SHOAL_TERM_SEPARATION, "sep_dist2", 2, 5e-3},
        {SHOAL_MODEL_FOV, 0, "coh_angle", "1.7", SHOAL_TERM_COHESION, "coh_angle", 1.7, 2e-3},
        {SHOAL_MODEL_FOV, 0, "boundary_force", "0", SHOAL_TERM_WALLS, "boundary_force", 0, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const planted *p = &cases[c];
        shoal_scene sc = scene_of(p->model, p->extras);
        shoal_sim_desc od = sc.desc;
        shoal_error e;
        if (strcmp(p->param, "dt") == 0)
            od.dt_s = atof(p->value);
        else
            assert_int_equal(shoal_params_set(p->model, &od.params, p->param, p->value, &e),
                             SHOAL_OK);
        float *rows = initial(&sc.desc, 3);
        double *t = engine_trajectory(&od, &sc, rows, 2);
        shoal_verify_report rep[2];
        verify_run(&sc.desc, &sc, SHOAL_VERIFY_F32, t, 2, rep);
        for (int k = 0; k < 2; k++) {
            const shoal_verify_report *r = &rep[k];
            printf("%-8s %s = %s: step %d: %s: %s -- %s\n", shoal_model_name(p->model), p->param,
                   p->value, k, shoal_verdict_name(r->verdict), shoal_term_name(r->term),
                   r->detail);
            assert_int_equal(r->verdict, SHOAL_VERDICT_RULE);
            assert_int_equal(r->term, p->term);
            assert_string_equal(r->param, p->fitted_param);
            assert_true(r->fitted_lo - p->tol <= p->truth && p->truth <= r->fitted_hi + p->tol);
            assert_true(r->explained * 4 >= r->diagnosed * 3);
        }
        free(t);
        free(rows);
    }
}

/* A lattice where some neighbours sit exactly on the radius (exact arithmetic): the outside
 * program leaves them out (steer, <=) or counts them (heading, <); verify names the flip.
 * Third (issue 43): steer on a lattice of spacing sep_radius, where every separation
 * neighbour sits on the radius, so that leaving them out leaves the whole term out: the
 * radius test is still what is named (the smallest change), not sep_weight = 0. */
static void test_strictness(void **state)
{
    (void)state;
    for (int m = 0; m < 3; m++) {
        shoal_model model = m == 1 ? SHOAL_MODEL_HEADING : SHOAL_MODEL_STEER;
        double spacing = m == 0 ? 0.5 : 1.0;
        size_t side = 8, n = 0;
        float *rows = malloc(side * side * side * 6 * sizeof(float));
        uint64_t x = 12345;
        for (size_t i = 0; i < side * side * side; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if ((x >> 33) % 10 < 4)
                continue; /* holes: the neighbourhoods differ */
            float *r = rows + n * 6;
            r[0] = (float)(spacing * (double)(i % side));
            r[1] = (float)(spacing * (double)(i / side % side));
            r[2] = (float)(spacing * (double)(i / side / side));
            for (int c = 0; c < 3; c++)
                r[3 + c] = (float)((double)((x >> (8 * c)) & 255) / 255.0 - 0.5);
            n++;
        }
        shoal_sim_desc d = shoal_sim_desc_default();
        d.model = model;
        shoal_params_default(model, &d.params);
        d.boid_count = n;
        shoal_sim_desc od = d;
        if (m == 1)
            od.params.neighbor_radius = nextafterf(2.0f, 3.0f); /* counts d == 2 */
        else
            od.params.sep_radius = nextafterf(1.0f, 0.0f); /* leaves d == 1 out */
        double *t = engine_trajectory(&od, NULL, rows, 1);
        shoal_verify_report rep;
        verify_run(&d, NULL, SHOAL_VERIFY_F32, t, 1, &rep);
        printf("%s lattice: %s: %s -- %s\n", shoal_model_name(model),
               shoal_verdict_name(rep.verdict), shoal_term_name(rep.term), rep.detail);
        assert_int_equal(rep.verdict, SHOAL_VERDICT_RULE);
        assert_int_equal(rep.term, m == 1 ? SHOAL_TERM_NEIGHBORS : SHOAL_TERM_SEPARATION);
        assert_int_equal(rep.strictness, m == 1 ? -1 : 1);
        assert_string_equal(rep.param, m == 1 ? "neighbor_radius" : "sep_radius");
        assert_non_null(strstr(rep.detail, m == 1 ? "is counted" : "is left out"));
        free(t);
        free(rows);
    }
}

/* Pairs a float step beyond a radius: the outside program (radius one float step larger)
 * counts them; that is float32 rounding at a threshold, not a rule. Separation (sep_radius
 * 1), and alignment and cohesion together (their radii 2 are one comparison in float32: the
 * flip moves both; each boid's only neighbour, so its counts may be 0 or 1). */
static void tie_case(int shared)
{
    size_t n = 60;
    float *rows = calloc(n * 6, sizeof(float));
    float far = nextafterf(shared ? 2.0f : 1.0f, 3.0f);
    for (size_t i = 0; i < n; i += 2) {
        float *a = rows + i * 6, *b = a + 6;
        a[0] = b[0] = (float)(i * 5); /* pairs 10 apart: no other neighbours */
        b[1] = far;
        a[3] = 0.3f;
        b[4] = -0.2f;
        a[5] = b[5] = 0.1f;
    }
    shoal_sim_desc d = shoal_sim_desc_default();
    d.boid_count = n;
    d.params.wall_size[0] = d.params.wall_size[1] = d.params.wall_size[2] = 1000;
    shoal_sim_desc od = d;
    if (shared)
        od.params.ali_radius = od.params.coh_radius = far;
    else
        od.params.sep_radius = far;
    double *t = engine_trajectory(&od, NULL, rows, 1);
    for (int ref = 0; ref < 2; ref++) {
        shoal_verify_report rep;
        verify_run(&d, NULL, ref ? SHOAL_VERIFY_F64 : SHOAL_VERIFY_F32, t, 1, &rep);
        printf("pairs a float step past the %s radius (%s): %s: %s -- %s\n",
               shared ? "alignment and cohesion" : "separation", ref ? "f64" : "f32",
               shoal_verdict_name(rep.verdict), shoal_term_name(rep.term), rep.detail);
        assert_int_equal(rep.verdict, SHOAL_VERDICT_TIE);
        assert_int_equal(rep.ties, n);
        shoal_term term = shared ? rep.worst[0].tie_term : SHOAL_TERM_SEPARATION;
        assert_true(term == (shared ? SHOAL_TERM_ALIGNMENT : SHOAL_TERM_SEPARATION) ||
                    (shared && term == SHOAL_TERM_COHESION));
        assert_int_equal(rep.term, term);
        assert_int_equal(rep.worst[0].tie_row, (int64_t)(rep.worst[0].row ^ 1));
    }
    free(t);
    free(rows);
}

static void test_threshold_tie(void **state)
{
    (void)state;
    tie_case(0);
    tie_case(1);
}

static void test_api_errors(void **state)
{
    (void)state;
    shoal_verify_desc vd = shoal_verify_desc_default();
    vd.sim.boid_count = 2;
    shoal_verify *v;
    shoal_error e;
    vd.worst_count = 0;
    assert_int_equal(shoal_verify_create(&vd, &v, &e), SHOAL_ERR_INPUT);
    vd.worst_count = 8;
    assert_int_equal(shoal_verify_create(&vd, &v, &e), SHOAL_OK);
    double a[12] = {0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0}, b[12];
    memcpy(b, a, sizeof b);
    b[7] = NAN;
    shoal_verify_report r;
    assert_int_equal(shoal_verify_step(v, a, b, &r, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "state 1: row 1 column 1 (py) is nan"));
    b[7] = 0.1; /* not a float32 value */
    assert_int_equal(shoal_verify_step(v, a, b, &r, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "not a float32 value"));
    double xyz[3] = {1, 2, 3};
    assert_int_equal(shoal_verify_set_targets(v, xyz, 1, &e), SHOAL_ERR_INPUT); /* steer */
    shoal_verify_destroy(v);
    assert_string_equal(shoal_verdict_name(SHOAL_VERDICT_TIE), "threshold tie");
    assert_string_equal(shoal_term_name(SHOAL_TERM_NEIGHBORS), "neighbours");
    assert_null(shoal_verdict_name(SHOAL_VERDICT_COUNT));
}

/* ---- the program ------------------------------------------------------------------------- */

/* A float32 .npy of up to 3 dimensions. */
static void write_npy(const char *name, int ndim, const size_t *dims, const float *data)
{
    char dict[128], shape[64] = "";
    size_t count = 1, len = 0;
    for (int i = 0; i < ndim; i++) {
        len += (size_t)snprintf(shape + len, sizeof shape - len, "%zu, ", dims[i]);
        count *= dims[i];
    }
    int dl = snprintf(dict, sizeof dict,
                      "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }", shape);
    size_t total = (10 + (size_t)dl + 1 + 63) / 64 * 64;
    FILE *f = fopen(path(name), "wb");
    assert_non_null(f);
    unsigned char pre[10] = {0x93,
                             'N',
                             'U',
                             'M',
                             'P',
                             'Y',
                             1,
                             0,
                             (unsigned char)((total - 10) & 255),
                             (unsigned char)((total - 10) >> 8)};
    fwrite(pre, 1, 10, f);
    fwrite(dict, 1, (size_t)dl, f);
    for (size_t i = 10 + (size_t)dl; i < total - 1; i++)
        fputc(' ', f);
    fputc('\n', f);
    fwrite(data, sizeof(float), count, f);
    fclose(f);
}

static void test_cli_formats(void **state)
{
    (void)state;
    /* shoal's trajectory directory (manifest: model, dt, parameters): bit-identical */
    assert_int_equal(run("init --model average --count 500 --seed 3 --out a.npy"), 0);
    assert_int_equal(run("step --model average --in a.npy --steps 4 --every 1 --out-dir tr "
                         "--set ali_weight=9 --quiet"),
                     0);
    assert_int_equal(run("verify --trajectory tr --csv v.csv --json v.json --quiet"), 0);
    assert_non_null(strstr(g_out, "shoal verify: average, 500 boids, 4 steps"));
    assert_non_null(strstr(g_out, "step 3 "));
    assert_non_null(strstr(g_out, "agrees -- bit-identical to the reference"));
    assert_non_null(strstr(g_out, "verdict: agrees"));
    json_value j;
    char jerr[256];
    assert_int_equal(json_load_file(path("v.json"), JSON_STRICT, &j, jerr, sizeof jerr), JSON_OK);
    const json_value *steps = json_get(&j, "steps"), *sum = json_get(&j, "summary");
    assert_true(steps && steps->type == JSON_ARRAY && steps->count == 4);
    assert_string_equal(json_get(sum, "verdict")->str, "agrees");
    assert_true(json_get(json_get(&j, "parameters"), "ali_weight")->num == 9);
    const json_value *w = json_get(&steps->items[0], "worst");
    assert_true(w && w->type == JSON_ARRAY && w->count == 8);
    json_free(&j);
    char *csv = read_all(path("v.csv"), NULL);
    assert_non_null(csv);
    assert_true(strncmp(csv, "step,t,count,pos_max,", 21) == 0);
    assert_non_null(strstr(csv, "\n3,0.05"));
    free(csv);
    /* the wrong contract: exit 1, the term named */
    assert_int_equal(run("verify --trajectory tr --set ali_weight=12 --quiet"), 1);
    assert_non_null(strstr(g_out, "verdict: rule differs: alignment (first at step 0)"));
    assert_non_null(strstr(g_out, "ali_weight acts as 9"));
    assert_non_null(strstr(g_out, "(the contract: 12)"));
    assert_int_equal(run("verify --trajectory tr --reference f64 --first 2 --quiet"), 0);
    assert_non_null(strstr(g_out, "2 steps from state 2"));

    /* the same states as numbered Unity dumps (velocity, position) and as a (T, N, 7)
     * array with the rows shuffled per state and ids in column 7 */
    shoal_error e;
    size_t n = 500;
    float *all = malloc(5 * n * 7 * sizeof(float));
    assert_int_equal(sh("mkdir bin"), 0);
    for (int k = 0; k < 5; k++) {
        char name[512];
        snprintf(name, sizeof name, "%s/tr/state_%06d.npy", g_dir, k);
        float *rows;
        size_t cnt;
        assert_int_equal(shoal_io_npy_read(name, &rows, &cnt, &e), SHOAL_OK);
        snprintf(name, sizeof name, "%s/bin/dump%d.bin", g_dir, k);
        assert_int_equal(shoal_io_unity_write(name, rows, cnt, &e), SHOAL_OK);
        for (size_t i = 0; i < n; i++) {
            size_t dst = (i * 7919 + (size_t)k * 31) % n; /* a permutation (7919 prime) */
            memcpy(all + ((size_t)k * n + dst) * 7, rows + i * 6, 6 * sizeof(float));
            all[((size_t)k * n + dst) * 7 + 6] = (float)(1000 + i);
        }
        free(rows);
    }
    assert_int_equal(run("verify --model average --set ali_weight=9 --trajectory bin --quiet"), 0);
    assert_non_null(strstr(g_out, "verdict: agrees"));
    size_t dims[3] = {5, n, 7};
    write_npy("t7.npy", 3, dims, all);
    assert_int_equal(run("verify --model average --set ali_weight=9 --trajectory t7.npy --quiet "
                         "--json t7.json"),
                     0);
    assert_non_null(strstr(g_out, "bit-identical"));
    char *js = read_all(path("t7.json"), NULL);
    assert_non_null(strstr(js, "\"id\": 1"));
    free(js);
    /* ids from a file instead: column 7 dropped, (T, N) ids */
    float *six = malloc(5 * n * 6 * sizeof(float)), *ids = malloc(5 * n * sizeof(float));
    for (size_t r = 0; r < 5 * n; r++) {
        memcpy(six + r * 6, all + r * 7, 6 * sizeof(float));
        ids[r] = all[r * 7 + 6];
    }
    size_t d6[3] = {5, n, 6}, di[2] = {5, n};
    write_npy("t6.npy", 3, d6, six);
    write_npy("ids.npy", 2, di, ids);
    assert_int_equal(run("verify --model average --set ali_weight=9 --trajectory t6.npy "
                         "--ids ids.npy --quiet"),
                     0);
    assert_non_null(strstr(g_out, "verdict: agrees"));
    /* without the ids the shuffled rows cannot agree */
    assert_int_equal(run("verify --model average --set ali_weight=9 --trajectory t6.npy --quiet"),
                     1);
    /* buffer records of 8 words: position at 0, velocity at 3, a uint32 id at 7, rows in
     * the shuffled order */
    assert_int_equal(sh("mkdir rec"), 0);
    for (int k = 0; k < 5; k++) {
        char name[64];
        snprintf(name, sizeof name, "rec/f%d.bin", k);
        FILE *f = fopen(path(name), "wb");
        assert_non_null(f);
        for (size_t i = 0; i < n; i++) {
            const float *r = all + ((size_t)k * n + i) * 7;
            float words[8] = {r[0], r[1], r[2], r[3], r[4], r[5], 0, 0};
            uint32_t id = (uint32_t)r[6];
            memcpy(&words[7], &id, 4);
            assert_int_equal(fwrite(words, 4, 8, f), 8);
        }
        fclose(f);
    }
    assert_int_equal(run("verify --model average --set ali_weight=9 --trajectory rec --layout "
                         "8:0:3:7 --quiet"),
                     0);
    assert_non_null(strstr(g_out, "bit-identical"));
    free(six);
    free(ids);
    free(all);
}

/* periodic and 2D worlds (issue 38): the manifest carries the world, verify steps in it and
 * compares positions by the minimum image; a boid crossing the seam is no error. Told the
 * wrong world (walls where the run wrapped), verify says the rule differs. */
static void test_cli_worlds(void **state)
{
    (void)state;
    /* a box of 12 for a school of radius 12: hundreds of boids on and across the seams */
    const char *w = "--set periodic=1 --set world_size=12,10,11 --set world_center=1,0,0";
    assert_int_equal(run("init --model steer --count 600 --seed 4 --set init_pos_radius=12 "
                         "--set init_vel_radius=3 %s --out wp.npy",
                         w),
                     0);
    assert_int_equal(run("step --model steer --in wp.npy --steps 3 --every 1 --out-dir wtr %s "
                         "--quiet",
                         w),
                     0);
    char *man = read_all(path("wtr/manifest.json"), NULL);
    assert_non_null(man);
    assert_non_null(strstr(man, "\"world\": {\"dims\": 3, \"periodic\": [1, 1, 1]"));
    free(man);
    assert_int_equal(run("verify --trajectory wtr --quiet"), 0);
    assert_non_null(strstr(g_out, "bit-identical to the reference"));
    assert_non_null(strstr(g_out, "verdict: agrees"));
    assert_int_equal(run("verify --trajectory wtr --reference f64 --quiet"), 0);
    assert_non_null(strstr(g_out, "verdict: agrees"));
    assert_int_equal(run("verify --trajectory wtr --set periodic=0 --quiet"), 1);
    assert_null(strstr(g_out, "verdict: agrees"));
    /* the plane */
    const char *p2 = "--set dims=2 --set periodic=1 --set world_size=14,9,0";
    assert_int_equal(run("init --model fov --count 400 --seed 2 %s --out w2.npy", p2), 0);
    assert_int_equal(
        run("step --model fov --in w2.npy --steps 3 --every 1 --out-dir w2tr %s --quiet", p2), 0);
    assert_int_equal(run("verify --trajectory w2tr --reference f64 --quiet"), 0);
    assert_non_null(strstr(g_out, "verdict: agrees"));
}

static void test_cli_refusals(void **state)
{
    (void)state;
    assert_int_equal(run("init --model steer --count 50 --seed 1 --out s.npy"), 0);
    assert_int_equal(
        run("step --model steer --in s.npy --steps 4 --every 2 --out-dir every2 --quiet"), 0);
    assert_int_equal(run("step --model steer --in s.npy --steps 1 --every 1 --out-dir one --quiet"),
                     0);
    struct {
        const char *args, *msg;
    } bad[] = {
        {"verify --model steer", "--trajectory T is required"},
        {"verify --trajectory nowhere", "nowhere: No such file"},
        {"verify --trajectory every2", "are 2 steps apart"},
        {"verify --trajectory one --first 1", "first 1: the trajectory has 2 states"},
        {"verify --trajectory one --model heading", "contradicts the trajectory's manifest"},
        {"verify --trajectory one --reference f16", "--reference: 'f16'"},
        {"verify --trajectory one --layout 6:0:2", "layout '6:0:2'"},
        {"verify --trajectory one --layout pv", "layout is for .bin buffer dumps"},
        {"verify --trajectory one --worst 99", "--worst"},
        {"verify --trajectory s.npy", "expected a trajectory of shape (T, N, 6)"},
        {"verify --trajectory one --csv /nonexistent/x.csv", "--csv"},
        {"verify --trajectory one --ids s.npy", "--ids"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = run("%s", bad[i].args);
        if (rc != 2 || !strstr(g_err, bad[i].msg))
            fail_msg("'%s': exit %d, stderr '%s' (expected 2 and '%s')", bad[i].args, rc, g_err,
                     bad[i].msg);
        int lines = 0;
        for (const char *c = g_err; *c; c++)
            lines += *c == '\n';
        assert_int_equal(lines, 1);
    }
    /* a directory with one state; states of different sizes; ids shared */
    assert_int_equal(sh("mkdir d1 && cp s.npy d1/a_1.npy"), 0);
    assert_int_equal(run("verify --model steer --trajectory d1"), 2);
    assert_non_null(strstr(g_err, "1 state: a trajectory needs at least 2"));
    assert_int_equal(run("init --model steer --count 40 --seed 1 --out d1/a_2.npy"), 0);
    assert_int_equal(run("verify --model steer --trajectory d1"), 2);
    assert_non_null(strstr(g_err, "40 rows, the first state has 50"));
    assert_int_equal(sh("mkdir d2 && cp s.npy d2/x.npy && cp s.npy d2/y.npy"), 0);
    assert_int_equal(run("verify --model steer --trajectory d2"), 2);
    assert_non_null(strstr(g_err, "no step number in the name"));
    size_t dims[3] = {2, 2, 7};
    float dup[2 * 2 * 7] = {0, 0, 0, 1, 0, 0, 5, 1, 0, 0, 1, 0, 0, 5,
                            0, 0, 0, 1, 0, 0, 5, 1, 0, 0, 1, 0, 0, 6};
    write_npy("dup.npy", 3, dims, dup);
    assert_int_equal(run("verify --model steer --trajectory dup.npy"), 2);
    assert_non_null(strstr(g_err, "share the id 5"));
    /* a gap in the numbering is refused, not verified as one step (issue 44, N20); a hidden
     * temporary is no state; a FIFO among the states is refused, not opened (it would block) */
    assert_int_equal(sh("mkdir gap && cp s.npy gap/state_0.npy && cp s.npy gap/state_1.npy && "
                        "cp s.npy gap/state_3.npy && cp s.npy gap/.state_2.npy.tmp.x.npy"),
                     0);
    assert_int_equal(run("verify --model steer --trajectory gap"), 2);
    assert_non_null(strstr(g_err, "are numbered 1 and 3; verify compares consecutive steps"));
    assert_int_equal(sh("rm gap/state_3.npy && mkfifo gap/state_2.npy"), 0);
    assert_int_equal(run("verify --model steer --trajectory gap"), 2);
    assert_non_null(strstr(g_err, "state_2.npy: not a regular file"));
    /* a damaged manifest field is refused, not skipped (N21) */
    assert_int_equal(sh("cp -r one bad && sed -i 's/\"dt\": [0-9.e-]*/\"dt\": \"0.01\"/' "
                        "bad/manifest.json"),
                     0);
    assert_int_equal(run("verify --trajectory bad"), 2);
    assert_non_null(strstr(g_err, "dt: expected a number of seconds > 0"));
    /* an unwritable report leaves nothing behind, and nothing else is written; the same file
     * twice; a report on stdout that cannot be written writes no file */
    assert_int_equal(run("verify --trajectory one --csv ok.csv --json /nonexistent/j.json"), 2);
    assert_false(exists("ok.csv"));
    assert_int_equal(run("verify --trajectory one --csv r.csv --json ./r.csv"), 2);
    assert_non_null(strstr(g_err, "--csv and --json name the same file"));
    assert_int_equal(run("verify --trajectory one --csv r.csv --json r.json > /dev/full"), 2);
    assert_non_null(strstr(g_err, "cannot write the standard output"));
    assert_false(exists("r.csv") || exists("r.json"));
    assert_int_equal(run("verify --trajectory one --csv r.csv --json r.json --quiet"), 0);
    assert_true(exists("r.csv") && exists("r.json"));
}

static int setup(void **state)
{
    (void)state;
    return cli_setup("verify");
}

static int teardown(void **state)
{
    (void)state;
    return cli_teardown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_engine_orders), cmocka_unit_test(test_planted),
        cmocka_unit_test(test_strictness),    cmocka_unit_test(test_threshold_tie),
        cmocka_unit_test(test_api_errors),    cmocka_unit_test(test_cli_formats),
        cmocka_unit_test(test_cli_refusals),  cmocka_unit_test(test_cli_worlds),
    };
    return test_exit(cmocka_run_group_tests(tests, setup, teardown));
}
