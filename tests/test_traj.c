/* SPDX-License-Identifier: MIT */
/* Long runs as a user runs them ($SHOAL_EXE): trajectories (step --every --out-dir, npy and
 * VTK read back by VTK's own reader), checkpoints (a run with predators split over several
 * processes equals one run, every model), the progress line (under a pseudo-terminal, never
 * in a pipe), render replay, sweeps; and their bad input: exit 2, nothing half-written. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/cli_harness.h"

#include "shoal/shoal.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char *slurp(const char *name, size_t *n_out)
{
    FILE *f = fopen(path(name), "rb");
    if (!f)
        fail_msg("cannot open %s", name);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    b[n] = 0;
    fclose(f);
    if (n_out)
        *n_out = (size_t)n;
    return b;
}

static void assert_same_file(const char *a, const char *b)
{
    size_t na, nb;
    char *x = slurp(a, &na), *y = slurp(b, &nb);
    if (na != nb || memcmp(x, y, na) != 0)
        fail_msg("%s and %s differ", a, b);
    free(x);
    free(y);
}

/* No file in the test directory (recursively) has a temporary's name. */
static void assert_no_temporaries(void)
{
    assert_int_equal(sh("test -z \"$(find . -name '.*.tmp.*')\""), 0);
}

static int setup(void **state)
{
    (void)state;
    return cli_setup("traj");
}

static int teardown(void **state)
{
    (void)state;
    return cli_teardown();
}

/* step --every E --out-dir: states at 0, E, 2E, ... and K, each equal to a plain run of
 * that many steps; the final --out as before; the manifest names every frame. */
static void test_out_dir(void **state)
{
    (void)state;
    assert_int_equal(sh("$S init --model heading --count 3000 --seed 2 --out a.npy"), 0);
    assert_int_equal(sh("$S step --model heading --in a.npy --steps 50 --every 20 "
                        "--out-dir tr --out b.npy --threads 2"),
                     0);
    const char *frames[] = {"state_000000.npy", "state_000020.npy", "state_000040.npy",
                            "state_000050.npy"};
    for (int i = 0; i < 4; i++) {
        char p[64];
        snprintf(p, sizeof p, "tr/%s", frames[i]);
        if (!exists(p))
            fail_msg("missing %s", p);
    }
    assert_false(exists("tr/state_000060.npy"));
    assert_int_equal(sh("$S step --model heading --in a.npy --steps 40 --out c40.npy"), 0);
    assert_same_file("tr/state_000040.npy", "c40.npy");
    assert_same_file("tr/state_000050.npy", "b.npy");
    assert_same_file("tr/state_000000.npy", "a.npy");
    char *m = slurp("tr/manifest.json", NULL);
    assert_non_null(strstr(m, "\"model\": \"heading\""));
    assert_non_null(strstr(m, "\"every\": 20"));
    assert_non_null(strstr(m, "\"target_period\""));
    assert_non_null(strstr(m, "\"file\": \"state_000050.npy\""));
    free(m);
    /* the manifest is JSON (checked by Python's parser when there is one) */
    sh("/usr/bin/python3 -c 'import json,sys; m=json.load(open(\"tr/manifest.json\")); "
       "sys.exit(0 if len(m[\"frames\"]) == 4 and m[\"dt\"] > 0 else 1)'");
    assert_int_equal(sh("/usr/bin/python3 -c 'import json' || exit 0; /usr/bin/python3 -c "
                        "'import json,sys; m=json.load(open(\"tr/manifest.json\")); "
                        "sys.exit(0 if len(m[\"frames\"]) == 4 else 1)'"),
                     0);
    /* --out-dir alone (no --out) is enough */
    assert_int_equal(sh("$S step --in a.npy --model heading --steps 3 --out-dir only"), 0);
    assert_true(exists("only/state_000003.npy"));
    assert_no_temporaries();
}

static void test_out_dir_bad(void **state)
{
    (void)state;
    assert_int_equal(sh("$S init --count 500 --out a.npy"), 0);
    assert_int_equal(sh("$S step --in a.npy --steps 5 --every 2 --out x.npy"), 2);
    assert_non_null(strstr(g_err, "--every"));
    assert_false(exists("x.npy"));
    assert_int_equal(sh("$S step --in a.npy --steps 5 --every 0 --out-dir d0 --out x.npy"), 2);
    assert_int_equal(sh("$S step --in a.npy --steps 5 --out-dir d1 --format png --out x.npy"), 2);
    assert_non_null(strstr(g_err, "--format"));
    /* a directory that cannot be made: a file in the way */
    assert_int_equal(sh("echo > plainfile"), 0);
    assert_int_equal(sh("$S step --in a.npy --steps 5 --out-dir plainfile/sub --out x.npy"), 2);
    assert_non_null(strstr(g_err, "plainfile"));
    assert_false(exists("x.npy"));
    if (getuid() != 0) { /* root writes anywhere */
        assert_int_equal(sh("mkdir -p ro && chmod 555 ro"), 0);
        assert_int_equal(sh("$S step --in a.npy --steps 5 --out-dir ro --out x.npy"), 2);
        assert_false(exists("x.npy"));
    }
    assert_no_temporaries();
}

/* --format vtk and a .vtp --out name, read back by VTK's own reader and compared with the
 * .npy states of the same run (tests/vtk_check.py; skipped without python3-vtk9). */
static void test_vtk(void **state)
{
    (void)state;
    assert_int_equal(sh("$S init --model fov --count 1500 --out a.npy"), 0);
    assert_int_equal(sh("$S step --model fov --in a.npy --steps 30 --every 10 --out-dir vn"), 0);
    assert_int_equal(sh("$S step --model fov --in a.npy --steps 30 --every 10 --out-dir vv "
                        "--format vtk --out one.vtp"),
                     0);
    assert_true(exists("vv/trajectory.pvd"));
    assert_true(exists("vv/manifest.json"));
    assert_true(exists("vv/state_000030.vtp"));
    assert_false(exists("vv/state_000030.npy"));
    int rc = sh("/usr/bin/python3 " SHOAL_SOURCE_ROOT "/tests/vtk_check.py vv vn one.vtp "
                "vn/state_000030.npy");
    if (rc == 77 || rc == 127) {
        print_message("skipped the VTK read-back: no /usr/bin/python3 with vtk\n");
        return;
    }
    if (rc != 0)
        fail_msg("vtk_check.py: %s", g_err);
}

/* Checkpoints: for every model, a run with predators (close enough to chase and be fled
 * from) split over three processes through --checkpoint / --resume gives the bytes of one
 * run; a split through plain state files does not (the predators restart). */
static void test_checkpoint(void **state)
{
    (void)state;
    const char *models[] = {"steer", "average", "heading", "classic", "fov"};
    for (int m = 0; m < 5; m++) {
        const char *md = models[m];
        const char *pred = "--set predator_count=3 --set predator_start=0,0,4 "
                           "--set predator_spread=1 --set flee_radius=8 --set flee_weight=20";
        /* 600 boids under the sanitizers: the same paths (grid, predators, every split) */
        assert_int_equal(sh("$S init --model %s --count %d --seed 5 --out a.npy", md,
                            SHOAL_TEST_SANITIZED ? 600 : 2000),
                         0);
        assert_int_equal(sh("$S step --model %s %s --in a.npy --steps 60 --out one.npy "
                            "--threads 2",
                            md, pred),
                         0);
        assert_int_equal(sh("$S step --model %s %s --in a.npy --steps 20 --checkpoint c1.ckpt "
                            "--threads 1",
                            md, pred),
                         0);
        assert_int_equal(sh("$S step --resume c1.ckpt --steps 25 --checkpoint c2.ckpt "
                            "--threads 3"),
                         0);
        assert_int_equal(sh("$S step --resume c2.ckpt --steps 15 --out two.npy --checkpoint "
                            "c3.ckpt"),
                         0);
        assert_same_file("one.npy", "two.npy");
        /* the old way restarts the predators: a different result */
        assert_int_equal(sh("$S step --model %s %s --in a.npy --steps 20 --out h.npy", md, pred),
                         0);
        assert_int_equal(sh("$S step --model %s %s --in h.npy --steps 40 --t0 %.17g --out "
                            "old.npy",
                            md, pred, 20.0 / 60.0),
                         0);
        size_t n1, n2;
        char *x = slurp("one.npy", &n1), *y = slurp("old.npy", &n2);
        if (n1 == n2 && memcmp(x, y, n1) == 0)
            fail_msg("%s: predators do not matter in this test (split via states equal)", md);
        free(x);
        free(y);
    }
    /* heading: pinned targets and time come back too (time checked through the targets) */
    assert_int_equal(sh("$S step --resume c3.ckpt --steps 0 --out zero.npy"), 0);
    assert_same_file("zero.npy", "two.npy");
}

/* The library half: a heading sim with a pinned target and predators, checkpointed into a
 * fresh sim mid-run, continues with the same bits (pins and the step count come back). */
static void test_checkpoint_api(void **state)
{
    (void)state;
    shoal_sim_desc d = shoal_sim_desc_default();
    d.model = SHOAL_MODEL_HEADING;
    shoal_params_default(d.model, &d.params);
    d.boid_count = 1500;
    d.t0_s = 0.25;
    d.params.predator_count = 2;
    d.seed = 3;
    shoal_error e;
    shoal_sim *a, *b;
    assert_int_equal(shoal_sim_create(&d, &a, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_draw_state(a, &e), SHOAL_OK);
    const float pin[3] = {5, -3, 2};
    assert_int_equal(shoal_sim_set_target(a, 1, pin, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_step(a, 30, &e), SHOAL_OK);
    float *rows = malloc(1500 * 6 * sizeof(float)), *ra = malloc(1500 * 6 * sizeof(float));
    shoal_sim_checkpoint ck;
    assert_int_equal(shoal_sim_get_rows(a, rows, shoal_sim_count(a), NULL), SHOAL_OK);
    shoal_sim_get_checkpoint(a, &ck);
    assert_int_equal(shoal_sim_create(&d, &b, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_set_rows(b, rows, shoal_sim_count(b), &e), SHOAL_OK);
    assert_int_equal(shoal_sim_set_checkpoint(b, &ck, &e), SHOAL_OK);
    assert_true(shoal_sim_time(a) == shoal_sim_time(b));
    float ta[3 * SHOAL_MAX_TARGETS], tb[3 * SHOAL_MAX_TARGETS];
    size_t na = shoal_sim_targets(a, shoal_sim_time(a), ta, SHOAL_MAX_TARGETS);
    assert_int_equal(na, shoal_sim_targets(b, shoal_sim_time(b), tb, SHOAL_MAX_TARGETS));
    assert_int_equal(shoal_sim_step(a, 40, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_step(b, 40, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_get_rows(a, ra, shoal_sim_count(a), NULL), SHOAL_OK);
    assert_int_equal(shoal_sim_get_rows(b, rows, shoal_sim_count(b), NULL), SHOAL_OK);
    assert_memory_equal(ra, rows, 1500 * 6 * sizeof(float));
    float pa[6], pb[6];
    assert_int_equal(shoal_sim_predators(a, pa, pa + 3, 1), 2);
    shoal_sim_predators(b, pb, pb + 3, 1);
    assert_memory_equal(pa, pb, sizeof pa);
    /* a checkpoint with another predator count, or a non-finite predator: refused */
    ck.predator_count = 3;
    assert_int_equal(shoal_sim_set_checkpoint(b, &ck, &e), SHOAL_ERR_INPUT);
    ck.predator_count = 2;
    ck.predator_pos[0][0] = NAN;
    assert_int_equal(shoal_sim_set_checkpoint(b, &ck, &e), SHOAL_ERR_INPUT);
    shoal_sim_destroy(a);
    shoal_sim_destroy(b);
    free(rows);
    free(ra);
}

static void test_checkpoint_bad(void **state)
{
    (void)state;
    assert_int_equal(sh("$S init --count 500 --out a.npy"), 0);
    assert_int_equal(sh("$S step --in a.npy --steps 2 --checkpoint c.ckpt"), 0);
    assert_int_equal(sh("$S step --resume c.ckpt --set max_speed=2 --steps 1 --out x.npy"), 2);
    assert_non_null(strstr(g_err, "--set"));
    assert_int_equal(sh("$S step --resume c.ckpt --in a.npy --steps 1 --out x.npy"), 2);
    assert_int_equal(sh("head -c 1000 c.ckpt > short.ckpt"), 0);
    assert_int_equal(sh("$S step --resume short.ckpt --steps 1 --out x.npy"), 2);
    assert_non_null(strstr(g_err, "short.ckpt"));
    assert_int_equal(sh("$S step --resume a.npy --steps 1 --out x.npy"), 2);
    assert_non_null(strstr(g_err, "checkpoint"));
    assert_int_equal(sh("$S step --resume nonesuch.ckpt --steps 1 --out x.npy"), 2);
    /* a flipped byte in the parameters: an out-of-range value is refused */
    assert_int_equal(sh("cp c.ckpt bad.ckpt && printf '\\377\\377\\377\\377' | dd of=bad.ckpt "
                        "bs=1 seek=72 conv=notrunc 2>/dev/null"),
                     0);
    assert_int_equal(sh("$S step --resume bad.ckpt --steps 1 --out x.npy"), 2);
    assert_false(exists("x.npy"));
    assert_int_equal(sh("$S step --in a.npy --steps 1 --checkpoint nodir/c.ckpt"), 2);
    assert_no_temporaries();
}

/* The progress line: under a pseudo-terminal (script(1)) stderr gets "\r...", cleared at the
 * end with ESC [K; in a pipe, and with --quiet, not a byte. */
static void test_progress(void **state)
{
    (void)state;
    assert_int_equal(sh("$S init --count 2000 --out a.npy"), 0);
    if (sh("command -v script") != 0) {
        print_message("skipped the pseudo-terminal half: no script(1)\n");
    } else {
        /* script copies the terminal's bytes to its typescript (stdout here) */
        assert_int_equal(sh("script -qefc \"$S step --in a.npy --steps 40 --out p.npy\" "
                            "/dev/null > tty.txt"),
                         0);
        char *t = slurp("tty.txt", NULL);
        if (!strstr(t, "\rshoal step: ") || !strstr(t, "/40") || !strstr(t, "\r\033[K"))
            fail_msg("no progress line under a terminal: '%s'", t);
        free(t);
        assert_int_equal(sh("script -qefc \"$S step --in a.npy --steps 40 --out q.npy --quiet\" "
                            "/dev/null > tty2.txt"),
                         0);
        t = slurp("tty2.txt", NULL);
        if (strstr(t, "shoal step:"))
            fail_msg("--quiet drew a progress line: '%s'", t);
        free(t);
        assert_same_file("p.npy", "q.npy");
        /* diverge and a replay draw one too */
        assert_int_equal(sh("script -qefc \"$S diverge --in a.npy --a cpu --b cpu --steps 20 "
                            "--csv d.csv\" /dev/null > tty3.txt && $S step --in a.npy --steps "
                            "4 --every 2 --out-dir pr && script -qefc \"$S render --in pr --out "
                            "prf --size 32x32\" /dev/null > tty4.txt"),
                         0);
        t = slurp("tty3.txt", NULL);
        if (!strstr(t, "\rshoal diverge: ") || !strstr(t, "/20"))
            fail_msg("no diverge progress line under a terminal: '%s'", t);
        free(t);
        t = slurp("tty4.txt", NULL);
        if (!strstr(t, "\rshoal render: ") || !strstr(t, "/3"))
            fail_msg("no replay progress line under a terminal: '%s'", t);
        free(t);
    }
    assert_int_equal(sh("$S step --in a.npy --steps 40 --out r.npy 2>&1 | cat > pipe.txt"), 0);
    size_t n;
    char *p = slurp("pipe.txt", &n);
    assert_int_equal(n, 0);
    free(p);
}

/* render --in DIR: each replayed frame is byte for byte the PNG `shoal render` draws of that
 * state with the same camera (given, or framing the first state); --follow moves the camera
 * with the school; --video encodes every frame; bad input exits 2 and writes nothing. */
static void test_replay(void **state)
{
    (void)state;
    assert_int_equal(sh("$S init --model steer --count 1200 --out a.npy"), 0);
    assert_int_equal(sh("$S step --in a.npy --steps 40 --every 20 --out-dir rp"), 0);
    const char *cam = "--size 96x64 --eye 0,5,40 --target 0,0,0 --threads 2";
    assert_int_equal(sh("$S render --in rp --out fr %s", cam), 0);
    const char *steps[] = {"000000", "000020", "000040"};
    for (int i = 0; i < 3; i++) {
        char a[64], b[64];
        assert_int_equal(
            sh("$S render --in rp/state_%s.npy --out one_%s.png %s", steps[i], steps[i], cam), 0);
        snprintf(a, sizeof a, "fr/frame_%s.png", steps[i]);
        snprintf(b, sizeof b, "one_%s.png", steps[i]);
        assert_same_file(a, b);
    }
    /* no camera given: the first state framed, kept for the others */
    assert_int_equal(sh("$S render --in rp --out auto --size 96x64"), 0);
    assert_int_equal(sh("$S render --in rp/state_000000.npy --out auto0.png --size 96x64"), 0);
    assert_same_file("auto/frame_000000.png", "auto0.png");
    /* --follow: the camera keeps its offset from the school's centre */
    assert_int_equal(sh("$S render --in rp --out fol --follow %s", cam), 0);
    assert_true(exists("fol/frame_000040.png"));
    if (sh("ffmpeg -version") == 0) {
        assert_int_equal(sh("$S render --in rp --video r.mp4 %s --fps 10", cam), 0);
        /* the video says how fast it plays the simulation: states 20 steps (1/3 s) apart */
        assert_non_null(strstr(g_err, "3 frames at 10 fps (0.3 s) play 0.6667 s of simulation, "
                                      "3.33x real time (--fps real: 3 fps)"));
        if (sh("command -v ffprobe") == 0) {
            assert_int_equal(sh("ffprobe -v error -count_frames -select_streams v:0 -show_entries "
                                "stream=nb_read_frames -of csv=p=0 r.mp4 > nf.txt"),
                             0);
            char *nf = slurp("nf.txt", NULL);
            assert_int_equal(atoi(nf), 3);
            free(nf);
        }
        /* --fps real: one state a frame at the simulation's rate */
        assert_int_equal(sh("$S render --in rp --video real.mp4 %s --fps real", cam), 0);
        assert_non_null(strstr(g_err, "3 frames at 3 fps (1 s), the simulation's own rate"));
        if (sh("command -v ffprobe") == 0) {
            assert_int_equal(sh("ffprobe -v error -show_entries format=duration -of csv=p=0 "
                                "real.mp4 > dur.txt"),
                             0);
            char *d = slurp("dur.txt", NULL);
            assert_true(fabs(atof(d) - 1.0) < 0.05);
            free(d);
        }
    }
    /* --fps real needs the time between states: the manifest's dt, two states or more */
    assert_int_equal(sh("mkdir -p nomf && cp rp/state_*.npy nomf/ && "
                        "$S render --in nomf --out - --fps real"),
                     2);
    assert_non_null(strstr(g_err, "no manifest.json with the time step"));
    /* bad input */
    assert_int_equal(sh("mkdir -p empty && $S render --in empty --out e2"), 2);
    assert_non_null(strstr(g_err, "state_NNNNNN.npy"));
    assert_false(exists("e2"));
    assert_int_equal(sh("$S render --in rp --video r.avi"), 2);
    assert_int_equal(sh("$S render --in a.npy --out x.png --follow"), 2);
    assert_false(exists("x.png"));
    assert_int_equal(sh("cp -r rp bad && head -c 100 rp/state_000020.npy > bad/state_000020.npy "
                        "&& $S render --in bad --out badfr --size 32x32"),
                     2);
    assert_non_null(strstr(g_err, "state_000020.npy"));
    assert_no_temporaries();
}

/* sweep: the CSV's bytes do not depend on --jobs or --threads; a sweep killed mid-way and
 * resumed gives the bytes of an uninterrupted one; the manifest is JSON with every member's
 * parameters; sweep_plot.py draws it. */
static void test_sweep(void **state)
{
    (void)state;
    const char *args = "--model steer --vary sep_weight=1:3:1 --vary ali_weight=0.5,1.5 "
                       "--seeds 4..5 --count 600 --steps 40 --every 10";
    assert_int_equal(sh("$S sweep %s --out s1 --jobs 1 --threads 1", args), 0);
    assert_int_equal(sh("$S sweep %s --out s2 --jobs 3 --threads 2", args), 0);
    assert_int_equal(sh("$S sweep %s --out s3 --jobs 2 --threads 0", args), 0);
    assert_same_file("s1/sweep.csv", "s2/sweep.csv");
    assert_same_file("s1/sweep.csv", "s3/sweep.csv");
    char *csv = slurp("s1/sweep.csv", NULL);
    assert_non_null(strstr(csv, "member,seed,sep_weight,ali_weight,step,t,polarization,milling,"
                                "mean_speed,mean_nn_distance,group_count,"
                                "largest_group_fraction,extent_x,extent_y,extent_z\n"));
    int lines = 0;
    for (const char *c = csv; *c; c++)
        lines += *c == '\n';
    assert_int_equal(lines, 1 + 12 * 5); /* 3 x 2 combinations x 2 seeds, steps 0..40 by 10 */
    assert_non_null(strstr(csv, "\n11,5,3,1.5,40,"));
    free(csv);
    /* the manifest: JSON, every member's full parameter set */
    assert_int_equal(sh("/usr/bin/python3 -c 'import json' || exit 0; /usr/bin/python3 -c "
                        "'import json,sys; m=json.load(open(\"s1/manifest.json\")); "
                        "ms=m[\"members\"]; sys.exit(0 if len(ms) == 12 and "
                        "ms[11][\"parameters\"][\"sep_weight\"] == 3 and "
                        "ms[11][\"parameters\"][\"ali_weight\"] == 1.5 and m[\"shoal\"] and "
                        "m[\"machine\"][\"cpus\"] >= 1 else 1)'"),
                     0);
    /* a member's rows are the statistics of its state: step 0 is the seed's initial state */
    assert_int_equal(sh("$S sweep --model steer --seeds 7 --count 300 --steps 0 --out s0"), 0);
    csv = slurp("s0/sweep.csv", NULL);
    assert_non_null(strstr(csv, "\n0,7,0,0,"));
    free(csv);

    /* --count keeps the scene's density (the start region grows): not with --keep-geometry */
    assert_int_equal(sh("$S sweep --model steer --seeds 7 --count 2400 --steps 0 --out sc1 && "
                        "$S sweep --model steer --seeds 7 --count 2400 --steps 0 --out sc2 "
                        "--keep-geometry && ! cmp -s sc1/sweep.csv sc2/sweep.csv"),
                     0);

    /* kill mid-sweep, resume: the same bytes (members run one at a time, each a while) */
    /* 500 boids under the sanitizers, where a member still takes a while (ASan) */
    const char *slow = SHOAL_TEST_SANITIZED
                           ? "--model steer --vary max_speed=2:9:1 --seeds 1..2 --count 500 "
                             "--steps 60 --every 20"
                           : "--model steer --vary max_speed=2:9:1 --seeds 1..2 --count 1500 "
                             "--steps 60 --every 20";
    assert_int_equal(sh("$S sweep %s --out full --jobs 2 --threads 2", slow), 0);
    assert_int_equal(sh("$S sweep %s --out part --jobs 1 --threads 1 & pid=$!; i=0; while [ ! -e "
                        "part/members/member_000002.csv ] && [ $i -lt 6000 ]; do sleep 0.01; "
                        "i=$((i+1)); done; kill -9 $pid; wait $pid; exit 0",
                        slow),
                     0);
    assert_false(exists("part/sweep.csv"));
    if (exists("part/members/member_000015.csv"))
        print_message("the sweep finished before the kill; resume only reassembles\n");
    assert_int_equal(sh("$S sweep %s --out part", slow), 2); /* not without --resume */
    assert_non_null(strstr(g_err, "--resume"));
    assert_int_equal(sh("$S sweep %s --out part --resume --jobs 2", slow), 0);
    assert_same_file("full/sweep.csv", "part/sweep.csv");
    /* --resume with other options: refused */
    assert_int_equal(sh("$S sweep %s --out part --resume --dt 0.02", slow), 2);
    assert_non_null(strstr(g_err, "different sweep"));
    assert_no_temporaries();

    /* the progress line names the member running */
    if (sh("command -v script") == 0) {
        assert_int_equal(sh("script -qefc \"$S sweep %s --out sp\" /dev/null > tty.txt", args), 0);
        char *t = slurp("tty.txt", NULL);
        if (!strstr(t, "\rshoal sweep: ") || !strstr(t, "member ") || !strstr(t, "\r\033[K"))
            fail_msg("no sweep progress line under a terminal: '%s'", t);
        free(t);
        assert_same_file("s1/sweep.csv", "sp/sweep.csv");
    }

    /* sweep_plot.py: PNGs of each statistic against time and against each parameter */
    int rc = sh("/usr/bin/python3 " SHOAL_SOURCE_ROOT "/tools/sweep_plot.py s1");
    if (rc == 77) {
        print_message("skipped sweep_plot.py: no matplotlib\n");
    } else {
        if (rc != 0)
            fail_msg("sweep_plot.py: %s", g_err);
        assert_true(exists("s1/plots/time.png"));
        assert_true(exists("s1/plots/vs_sep_weight.png"));
        assert_true(exists("s1/plots/vs_ali_weight.png"));
        assert_int_equal(sh("head -c 8 s1/plots/time.png | od -c | grep -q 'P   N   G'"), 0);
        assert_no_temporaries();
    }
}

static void test_sweep_bad(void **state)
{
    (void)state;
    const char *base = "--model steer --seeds 1..2 --count 200 --steps 10";
    assert_int_equal(sh("$S sweep %s --vary nope=1,2 --out b1", base), 2);
    assert_non_null(strstr(g_err, "nope"));
    assert_false(exists("b1"));
    assert_int_equal(sh("$S sweep %s --vary sep_weight=3:1:1 --out b2", base), 2);
    assert_non_null(strstr(g_err, "empty range"));
    assert_false(exists("b2"));
    assert_int_equal(sh("$S sweep %s --vary sep_weight=1:3:0 --out b3", base), 2);
    assert_int_equal(sh("$S sweep %s --vary sep_radius=-1,1 --out b4", base), 2);
    assert_false(exists("b4"));
    assert_int_equal(sh("$S sweep %s --vary sep_weight=1,x --out b5", base), 2);
    assert_int_equal(sh("$S sweep --model steer --seeds 5..2 --out b6"), 2);
    assert_int_equal(sh("$S sweep %s --vary sep_weight=1,2 --vary sep_weight=3 --out b7", base), 2);
    assert_int_equal(sh("$S sweep %s --vary sep_weight=1,2", base), 2); /* no --out */
    assert_int_equal(sh("echo > afile && $S sweep %s --vary sep_weight=1,2 --out afile/d", base),
                     2);
    assert_non_null(strstr(g_err, "afile"));
    assert_false(exists("b1") || exists("b2") || exists("b3") || exists("b5") || exists("b6"));
    assert_no_temporaries();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_out_dir),
        cmocka_unit_test(test_out_dir_bad),
        cmocka_unit_test(test_vtk),
        cmocka_unit_test(test_checkpoint),
        cmocka_unit_test(test_checkpoint_api),
        cmocka_unit_test(test_checkpoint_bad),
        cmocka_unit_test(test_progress),
        cmocka_unit_test(test_replay),
        cmocka_unit_test(test_sweep),
        cmocka_unit_test(test_sweep_bad),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
