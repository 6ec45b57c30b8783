/* SPDX-License-Identifier: MIT */
/* The faults of the hostile trial of 2026-11-25 (issue 33 lists them) that
 * are not MPI's, one test each (named after the fault), driving the real program
 * ($SHOAL_EXE) as the trial did: two sweeps in one directory, a --resume during a live sweep,
 * an edited scene mesh, damaged member files, a reused --out-dir, signals to a sweep and its
 * members, full disks (a small tmpfs in a private mount namespace where that works, else a
 * file size limit), damaged checkpoints, non-UTF-8 names, stdout on /dev/full. Each fails
 * against the program built before the fixes (SHOAL_EXE=old/shoal; docs/ROBUSTNESS.md says
 * how each was checked). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/cli_harness.h"
#include "tests/scenes.h"

#include "shoal/shoal.h"
#include "support/json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *slurp(const char *name, size_t *n_out)
{
    size_t n = 0;
    char *b = read_all(path(name), &n);
    if (!b)
        fail_msg("cannot read %s", name);
    if (n_out)
        *n_out = n;
    return b;
}

static int same_file(const char *a, const char *b)
{
    size_t na, nb;
    char *x = slurp(a, &na), *y = slurp(b, &nb);
    int same = na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

static void assert_same_file(const char *a, const char *b)
{
    if (!same_file(a, b))
        fail_msg("%s and %s differ", a, b);
}

/* No file in the test directory (recursively) has a temporary's or a lock's name. */
static void assert_no_temporaries(void)
{
    if (sh("test -z \"$(find . -name '.*.tmp.*' -o -name .shoal.lock)\"") != 0) {
        sh("find . -name '.*.tmp.*' -o -name .shoal.lock");
        fail_msg("temporaries left: %s", g_out);
    }
}

static void assert_err_has(const char *what)
{
    if (!strstr(g_err, what))
        fail_msg("expected '%s' in stderr: '%s'", what, g_err);
}

/* Wait (at most 60 s) until the shell test TEST holds in the scratch directory. */
static int wait_for(const char *test)
{
    return sh("i=0; while ! (%s) && [ $i -lt 6000 ]; do sleep 0.01; i=$((i+1)); done; %s", test,
              test);
}

/* Run SCRIPT (sh, $S = shoal) in a private mount namespace with a tmpfs of SIZE mounted on
 * ./tiny: the exit code, or 77 when no such mount can be made here (not root, no unshare). */
static int on_tiny_fs(const char *size, const char *script)
{
    FILE *f = fopen(path("tiny.sh"), "w");
    assert_non_null(f);
    fprintf(f,
            "set -u\nmkdir -p tiny\nmount -t tmpfs -o size=%s tmpfs tiny 2>/dev/null || exit "
            "77\nS=%s\n%s\n",
            size, g_exe, script);
    fclose(f);
    return sh("command -v unshare > /dev/null || exit 77; unshare -m sh ./tiny.sh");
}

/* Fill ./tiny (in on_tiny_fs) up to KEEP free bytes. */
#define FILL_TINY(keep)                                                                            \
    "head -c $(( $(df --output=avail -B1 tiny | tail -1) - " keep " )) /dev/zero > tiny/filler\n"

/* Each test in a scratch directory of its own (they reuse names such as d/). */
static int setup(void **state)
{
    (void)state;
    return cli_setup("hostile");
}

static int teardown(void **state)
{
    (void)state;
    return cli_teardown();
}

/* ---- sweeps ------------------------------------------------------------------------------ */

/* F3: two different sweeps started together into one --out: one runs, the other is refused
 * (exit 2 naming the directory); the sweep.csv is the winner's, bytes of a clean run. */
static void test_f03_two_sweeps_one_dir(void **state)
{
    (void)state;
    const char *a = "--seeds 1..3 --count 1500 --steps 60 --every 20 --jobs 2 --threads 2 "
                    "--set init_pos_radius=6 --quiet";
    assert_int_equal(sh("$S sweep --vary sep_weight=1,2 %s --out ref1", a), 0);
    assert_int_equal(sh("$S sweep --vary sep_weight=5,6 %s --out ref2", a), 0);
    /* 2 tries under the sanitizers (each the same paths: one sweep runs, one is refused);
     * the gcc and coverage suites try 6 times */
    for (int t = 0; t < (SHOAL_TEST_SANITIZED ? 2 : 6); t++) {
        int rc = sh(
            "rm -rf d; ($S sweep --vary sep_weight=1,2 %s --out d > /dev/null 2> e1.txt; echo $? > "
            "rc1.txt) & ($S sweep --vary sep_weight=5,6 %s --out d > /dev/null 2> e2.txt; echo $? "
            "> "
            "rc2.txt) & wait; echo $(cat rc1.txt) $(cat rc2.txt)",
            a, a);
        assert_int_equal(rc, 0);
        int r1 = -1, r2 = -1;
        assert_int_equal(sscanf(g_out, "%d %d", &r1, &r2), 2);
        if (!((r1 == 0 && r2 == 2) || (r1 == 2 && r2 == 0)))
            fail_msg("try %d: exit codes %d and %d (one sweep must run, the other be refused)", t,
                     r1, r2);
        char *err = slurp(r1 == 2 ? "e1.txt" : "e2.txt", NULL);
        if (!strstr(err, "--out d") ||
            !(strstr(err, "another shoal run") || strstr(err, "holds a sweep already")))
            fail_msg("try %d: the refusal does not say why: '%s'", t, err);
        free(err);
        assert_same_file("d/sweep.csv", r1 == 0 ? "ref1/sweep.csv" : "ref2/sweep.csv");
        assert_same_file("d/sweep.spec", r1 == 0 ? "ref1/sweep.spec" : "ref2/sweep.spec");
    }
    assert_no_temporaries();
}

/* A sweep whose members take a while (about a second each here; under ASan + UBSan a
 * quarter of the steps and half the boids about half a second, the coverage build's -O2 a
 * quarter of the steps). */
static const char *slow_sweep =
    SHOAL_TEST_SANITIZED ? "--vary sep_weight=1,2 --seeds 1..3 --count 2500 --steps 60 "
                           "--every 20 --jobs 2 --threads 2 --set init_pos_radius=5 "
                           "--quiet"
    : SHOAL_TEST_SHORT   ? "--vary sep_weight=1,2 --seeds 1..3 --count 5000 --steps 60 "
                           "--every 20 --jobs 2 --threads 2 --set init_pos_radius=6 "
                           "--quiet"
                         : "--vary sep_weight=1,2 --seeds 1..3 --count 5000 --steps 240 "
                           "--every 40 --jobs 2 --threads 2 --set init_pos_radius=6 "
                           "--quiet";

/* F4: a --resume started while the sweep runs is refused (the lock), and the running sweep
 * finishes, its members' temporaries untouched. */
static void test_f04_resume_during_live_sweep(void **state)
{
    (void)state;
    int rc =
        sh("true; $S sweep %s --out r 2> first.txt & pid=$!; i=0; while [ -z \"$(ls -A r/members "
           "2>/dev/null)\" ] && [ $i -lt 6000 ]; do sleep 0.01; i=$((i+1)); done; $S sweep "
           "%s --out r --resume; echo $? > second.txt; wait $pid",
           slow_sweep, slow_sweep);
    char *second = slurp("second.txt", NULL), *first = slurp("first.txt", NULL);
    if (rc != 0)
        fail_msg("the running sweep failed (%d): '%s'", rc, first);
    if (atoi(second) != 2)
        fail_msg("the --resume during the sweep was not refused (exit %d)", atoi(second));
    assert_err_has("--out r");
    assert_err_has("another shoal run");
    free(second);
    free(first);
    assert_true(exists("r/sweep.csv"));
    /* a resume once the sweep is over: fine, and the same bytes */
    assert_int_equal(sh("cp r/sweep.csv before.csv && $S sweep %s --out r --resume", slow_sweep),
                     0);
    assert_same_file("r/sweep.csv", "before.csv");
    assert_no_temporaries();
}

/* F5: sweep.spec holds the SHA-256 of the scene and of every mesh it names; a --resume after
 * either changed is refused. */
static void test_f05_resume_scene_changed(void **state)
{
    (void)state;
    assert_int_equal(sh("cp %s/assets/rock.obj . && sed 's|../rock.obj|rock.obj|' "
                        "%s/assets/scenes/steer_rock_mesh.ini > scene.ini",
                        SHOAL_SOURCE_ROOT, SHOAL_SOURCE_ROOT),
                     0);
    const char *s = "--scene scene.ini --vary sep_weight=1,2 --count 800 --steps 20 --every 10 "
                    "--jobs 2 --threads 2 --quiet";
    assert_int_equal(sh("$S sweep %s --out k", s), 0);
    /* the hashes are the files' SHA-256, as sha256sum computes them */
    if (sh("command -v sha256sum") == 0) {
        assert_int_equal(
            sh("grep -q \"\\\"scene_sha256\\\": \\\"$(sha256sum scene.ini | cut -c1-64)"
               "\\\"\" k/sweep.spec && grep -q \"\\\"sha256\\\": \\\"$(sha256sum "
               "rock.obj | cut -c1-64)\\\"\" k/sweep.spec"),
            0);
    } else {
        test_skip_part("F5: no sha256sum to check the hashes against");
    }
    assert_int_equal(sh("$S sweep %s --out k --resume", s), 0); /* unchanged: fine */
    assert_int_equal(sh("cp scene.ini scene.orig && sed -i 's/position = 0,0,0/position = 3,0,0/' "
                        "scene.ini && $S sweep %s --out k --resume",
                        s),
                     2);
    assert_err_has("different sweep");
    assert_int_equal(sh("cp scene.orig scene.ini && echo '# edited' >> rock.obj && $S sweep %s "
                        "--out k --resume",
                        s),
                     2);
    assert_err_has("different sweep");
    /* the manifest and spec stay valid JSON */
    if (sh("/usr/bin/python3 -c 'import json'") == 0)
        assert_int_equal(sh("/usr/bin/python3 -c 'import json; json.load(open(\"k/sweep.spec\")); "
                            "m = json.load(open(\"k/manifest.json\")); "
                            "assert m[\"sweep\"][\"meshes\"][0][\"name\"] == \"rock\"'"),
                         0);
    assert_no_temporaries();
}

/* F6: --resume reads every member file whole (rows, columns, member id, steps); a damaged
 * one is run again, and the sweep.csv is the bytes of a clean run. */
static void test_f06_damaged_members(void **state)
{
    (void)state;
    const char *a = "--vary sep_weight=1,2 --seeds 1..4 --count 600 --steps 40 --every 10 "
                    "--jobs 2 --threads 2 --quiet";
    assert_int_equal(sh("$S sweep %s --out d", a), 0);
    assert_int_equal(sh("cp d/sweep.csv ref.csv"), 0);
    const char *damage[] = {
        ": > d/members/member_000003.csv",
        "head -c 50 ref.csv > t && mv t d/members/member_000003.csv",
        "echo not,a,member > d/members/member_000003.csv",
        "head -c -1 d/members/member_000003.csv > t && mv t d/members/member_000003.csv",
        "cp d/members/member_000002.csv d/members/member_000003.csv",
        "cat d/members/member_000004.csv >> d/members/member_000003.csv",
        "sed -i '2s/,[^,]*$/,x/' d/members/member_000003.csv",
    };
    for (size_t i = 0; i < sizeof damage / sizeof damage[0]; i++) {
        assert_int_equal(sh("%s", damage[i]), 0);
        if (sh("$S sweep %s --out d --resume", a) != 0)
            fail_msg("damage '%s': the resume failed: %s", damage[i], g_err);
        assert_err_has("member 3:");
        assert_err_has("running it again");
        if (!same_file("d/sweep.csv", "ref.csv"))
            fail_msg("damage '%s': sweep.csv differs from a clean run", damage[i]);
    }
    /* a directory in the member's place: the member cannot be written, exit 2 naming it */
    assert_int_equal(sh("rm d/members/member_000003.csv && mkdir d/members/member_000003.csv && "
                        "rm d/sweep.csv"),
                     0);
    assert_int_equal(sh("$S sweep %s --out d --resume", a), 2);
    assert_err_has("member_000003.csv");
    assert_false(exists("d/sweep.csv"));
    assert_no_temporaries();
}

/* F13: SIGTERM to a sweep (alone, or to its whole process group as a terminal's Ctrl-C
 * sends it) reaches its members, which remove their temporaries; the sweep dies by it. */
static void test_f13_signal_sweep(void **state)
{
    (void)state;
    const struct {
        const char *sig;
        int num, group;
    } cases[] = {{"TERM", 15, 0}, {"TERM", 15, 1}, {"HUP", 1, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int rc = sh("rm -rf g; setsid $S sweep %s --out g & pid=$!; i=0; while [ -z \"$(ls -A "
                    "g/members 2>/dev/null)\" ] && [ $i -lt 6000 ]; do sleep 0.01; i=$((i+1)); "
                    "done; kill -%s %s$pid; wait $pid",
                    slow_sweep, cases[c].sig, cases[c].group ? "-" : "");
        if (rc != 128 + cases[c].num)
            fail_msg("SIG%s to the %s: it did not die by the signal (%d)", cases[c].sig,
                     cases[c].group ? "group" : "sweep", rc);
        /* the members die with it (nothing of the sweep left running) */
        assert_int_equal(wait_for("! pgrep -f 'sweep .*--out g$' > /dev/null"), 0);
        assert_no_temporaries();
        assert_false(exists("g/sweep.csv"));
    }
    /* Ctrl-C: SIGINT to the whole process group (a shell's background job ignores SIGINT, so
     * the sweep is started by Python with SIGINT at its default, in a group of its own) */
    if (sh("/usr/bin/python3 -c 'import subprocess'") != 0) {
        test_skip_part("F13 SIGINT to the group: no python3");
        return;
    }
    int rc = sh("rm -rf g; /usr/bin/python3 -c 'import os, signal, subprocess, sys, time\n"
                "p = subprocess.Popen(sys.argv[1:], preexec_fn=lambda: (signal.signal("
                "signal.SIGINT, signal.SIG_DFL), os.setpgid(0, 0)))\n"
                "t = time.time()\n"
                "while not (os.path.isdir(\"g/members\") and os.listdir(\"g/members\")) and "
                "time.time() - t < 60: time.sleep(0.01)\n"
                "os.killpg(p.pid, signal.SIGINT)\n"
                "sys.exit(-p.wait())' $S sweep %s --out g",
                slow_sweep);
    if (rc != 2)
        fail_msg("SIGINT to the group: the sweep did not die by SIGINT (%d)", rc);
    assert_int_equal(wait_for("! pgrep -f 'sweep .*--out g$' > /dev/null"), 0);
    assert_no_temporaries();
}

/* F14: a --resume removes what killed sweeps left at the top too, not only in members/. */
static void test_f14_resume_removes_top_temporaries(void **state)
{
    (void)state;
    const char *a = "--vary sep_weight=1,2 --count 300 --steps 10 --quiet";
    assert_int_equal(sh("$S sweep %s --out d", a), 0);
    assert_int_equal(sh("touch d/.sweep.csv.tmp.AAAAAA d/.manifest.json.tmp.BBBBBB "
                        "d/.sweep.spec.tmp.CCCCCC d/members/.member_000000.csv.tmp.DDDDDD"),
                     0);
    /* not another command's temporary, which may be live (single files take no lock) */
    assert_int_equal(sh("touch d/.notes.txt.tmp.EEEEEE"), 0);
    assert_int_equal(sh("$S sweep %s --out d --resume", a), 0);
    assert_true(exists("d/.notes.txt.tmp.EEEEEE"));
    assert_int_equal(sh("rm d/.notes.txt.tmp.EEEEEE"), 0);
    assert_no_temporaries();
}

/* F15: a member that cannot write its file is exit 2 (an output error), not 1 (a
 * non-finite value); the closing line counts finished, failed and not started members; a
 * member killed from outside is named with its signal. */
static void test_f15_member_failures(void **state)
{
    (void)state;
    const char *a = "--vary sep_weight=1,2 --seeds 1..4 --count 300 --steps 10 --jobs 1 "
                    "--threads 1 --quiet";
    assert_int_equal(sh("$S sweep %s --out d", a), 0);
    assert_int_equal(sh("rm d/sweep.csv d/members/member_00000[3-7].csv && mkdir "
                        "d/members/member_000003.csv"),
                     0);
    assert_int_equal(sh("$S sweep %s --out d --resume", a), 2);
    assert_err_has("member_000003.csv");
    assert_err_has("3 of 8 members finished, 1 failed, 4 not started");
    /* a member killed by SIGKILL: exit 1, the member and the signal named */
    int rc =
        sh("$S sweep %s --out kk & pid=$!; i=0; while [ -z \"$(pgrep -P $pid)\" ] && [ $i "
           "-lt 6000 ]; do sleep 0.01; i=$((i+1)); done; kill -KILL $(pgrep -P $pid | head -1); "
           "wait $pid",
           slow_sweep);
    assert_int_equal(rc, 1);
    assert_err_has("killed by signal 9");
    assert_err_has("1 failed");
    /* a full disk: exit 2 and the member's reason */
    rc = on_tiny_fs("200k", FILL_TINY("12000") "$S sweep --vary sep_weight=1,2,3 --count 100 "
                                               "--steps 10 --every 1 --out tiny/sw --quiet\n");
    if (rc == 77) {
        test_skip_part("F15 on a full disk: no tmpfs can be mounted here");
    } else {
        if (rc != 2)
            fail_msg("a sweep onto a full disk: exit %d, expected 2 (%s)", rc, g_err);
        assert_err_has("No space left on device");
    }
    assert_no_temporaries();
}

/* F16, F17, F27: --threads, --seeds and --vary ranges are refused at once, with the right
 * message, and nothing is written. */
static void test_f16_f17_f27_sweep_options(void **state)
{
    (void)state;
    assert_int_equal(sh("$S sweep --vary sep_weight=1 --count 100 --steps 2 --threads 3000 "
                        "--out thr"),
                     2);
    assert_err_has("--threads");
    assert_err_has("out of range");
    assert_false(exists("thr"));
    assert_int_equal(sh("$S sweep --vary sep_weight=1,2 --count 100 --steps 2 --jobs 2 "
                        "--threads 1025 --out thr2"),
                     2);
    assert_false(exists("thr2"));
    /* seeds: init's --seed parser and message; too large is out of range, not "not an
     * integer", and never saturates silently */
    assert_int_equal(sh("$S sweep --vary sep_weight=1 --count 50 --steps 2 --seeds "
                        "99999999999999999999999 --out s1"),
                     2);
    assert_err_has("out of range");
    assert_false(exists("s1"));
    assert_int_equal(sh("$S sweep --vary sep_weight=1 --count 50 --steps 2 --seeds "
                        "9223372036854775808 --out s2"),
                     2);
    assert_err_has("out of range");
    assert_int_equal(sh("$S sweep --vary sep_weight=1 --count 50 --steps 2 --seeds "
                        "1..9223372036854775808 --out s2"),
                     2);
    assert_err_has("'9223372036854775808' is out of range");
    assert_int_equal(sh("$S init --count 50 --seed 9223372036854775808 --out x.npy"), 2);
    assert_err_has("'9223372036854775808' is out of range");
    assert_int_equal(sh("$S sweep --vary sep_weight=1 --count 50 --steps 2 --seeds x..3 --out s3"),
                     2);
    assert_err_has("not an integer");
    assert_false(exists("s2") || exists("s3") || exists("x.npy"));
    /* the largest seed is accepted and written as given */
    assert_int_equal(sh("$S sweep --vary sep_weight=1 --count 50 --steps 2 --seeds "
                        "9223372036854775807 --out s4 --quiet"),
                     0);
    assert_int_equal(sh("sed -n 2p s4/sweep.csv | cut -d, -f2"), 0);
    assert_string_equal(g_out, "9223372036854775807\n");
    /* an overflowing range is three values, the first out of the parameter's range */
    assert_int_equal(sh("$S sweep --vary sep_weight=-1e308:1e308:1e308 --count 10 --out v"), 2);
    if (strstr(g_err, "more than"))
        fail_msg("a 3-value range called too long: '%s'", g_err);
    assert_err_has("sep_weight"); /* its first value, -1e308, is no float32 */
    assert_false(exists("v"));
}

/* F26: sweep_plot.py draws a valid sweep whose statistic is NaN everywhere (one boid:
 * mean_nn_distance), and refuses a damaged sweep.csv in one line, no traceback. */
static void test_f26_sweep_plot(void **state)
{
    (void)state;
    int rc = sh("/usr/bin/python3 -c 'import numpy, matplotlib'");
    if (rc != 0) {
        test_skip_part("F26: no numpy/matplotlib for tools/sweep_plot.py");
        return;
    }
    assert_int_equal(sh("$S sweep --vary sep_weight=1,2 --count 1 --steps 5 --out c1 --quiet"), 0);
    rc = sh("/usr/bin/python3 %s/tools/sweep_plot.py c1", SHOAL_SOURCE_ROOT);
    if (rc != 0)
        fail_msg("sweep_plot.py on a one-boid sweep: exit %d: %s", rc, g_err);
    assert_true(exists("c1/plots/time.png") && exists("c1/plots/vs_sep_weight.png"));
    assert_int_equal(sh("$S sweep --vary sep_weight=1,2 --count 200 --steps 10 --out sw --quiet"),
                     0);
    const char *damage[] = {"head -c 300 sw/sweep.csv > t/sweep.csv",
                            "cp sw/sweep.csv t/sweep.csv && echo not,a,member >> t/sweep.csv",
                            "cp sw/sweep.csv t/sweep.csv && sed -i '3s/,[^,]*$/,/' t/sweep.csv",
                            "printf 'member,seed,step,t\\n\\377\\376,1,2,3\\n' > t/sweep.csv"};
    for (size_t i = 0; i < sizeof damage / sizeof damage[0]; i++) {
        assert_int_equal(sh("mkdir -p t && %s", damage[i]), 0);
        rc = sh("/usr/bin/python3 %s/tools/sweep_plot.py t", SHOAL_SOURCE_ROOT);
        if (rc != 2 || strstr(g_err, "Traceback") || strchr(g_err, '\n') != strrchr(g_err, '\n'))
            fail_msg("damage '%s': exit %d, not one line: '%s'", damage[i], rc, g_err);
        assert_err_has("t/sweep.csv");
    }
}

/* ---- trajectories, replay, step outputs -------------------------------------------------- */

/* F7: a reused --out-dir holding another run's trajectory is refused (--overwrite replaces
 * it whole); a second step into a directory in use is refused; a run killed half way leaves
 * the old trajectory as it was; replay draws the manifest's frames only. */
static void test_f07_reused_out_dir(void **state)
{
    (void)state;
    assert_int_equal(sh("$S init --count 700 --seed 3 --out in.npy"), 0);
    assert_int_equal(sh("$S step --in in.npy --out-dir st --every 10 --steps 100 --set "
                        "sep_weight=1"),
                     0);
    assert_int_equal(sh("cp -r st st_first"), 0);
    assert_int_equal(sh("$S step --in in.npy --out-dir st --every 10 --steps 30 --set "
                        "sep_weight=5"),
                     2);
    assert_err_has("--out-dir st");
    assert_err_has("--overwrite");
    assert_int_equal(sh("diff -r st st_first"), 0); /* untouched */
    /* --resume into the first part's directory: refused the same way */
    assert_int_equal(sh("$S step --in in.npy --steps 5 --checkpoint c.ckpt && $S step --resume "
                        "c.ckpt --steps 5 --out-dir st"),
                     2);
    /* --overwrite: the new run's files only (a staging directory a killed run left goes;
     * another command's temporary, possibly live, stays) */
    assert_int_equal(sh("mkdir st/.shoal-stage.tmp.ABCDEF && touch "
                        "st/.shoal-stage.tmp.ABCDEF/state_000000.npy st/.x.npy.tmp.GGGGGG"),
                     0);
    assert_int_equal(sh("$S step --in in.npy --out-dir st --every 10 --steps 30 --set "
                        "sep_weight=5 --overwrite"),
                     0);
    assert_false(exists("st/.shoal-stage.tmp.ABCDEF"));
    assert_int_equal(sh("rm st/.x.npy.tmp.GGGGGG"), 0);
    assert_int_equal(sh("ls st | tr '\\n' ' '"), 0);
    assert_string_equal(g_out, "manifest.json state_000000.npy state_000010.npy state_000020.npy "
                               "state_000030.npy ");
    assert_int_equal(sh("$S render --in st --out st_png --size 64x48"), 0);
    assert_int_equal(sh("ls st_png | wc -l"), 0);
    assert_int_equal(atoi(g_out), 4);

    /* killed half way: the directory keeps the first run's manifest and frames only */
    assert_int_equal(sh("$S init --count 60000 --seed 3 --set init_pos_radius=20 --set "
                        "wall_size=60,60,60 --out big.npy"),
                     0);
    assert_int_equal(sh("$S step --in big.npy --out-dir kl --every 2 --steps 10 --set "
                        "wall_size=60,60,60 --set sep_weight=1 && cp -r kl kl_first"),
                     0);
    int rc =
        sh("$S step --in big.npy --out-dir kl --every 2 --steps 400 --set "
           "wall_size=60,60,60 --set sep_weight=5 --overwrite & pid=$!; i=0; while [ -z "
           "\"$(ls kl/.shoal-stage.tmp.*/state_000012.npy kl/state_000012.npy 2>/dev/null)\" ] "
           "&& [ $i -lt 6000 ]; do sleep 0.01; i=$((i+1)); done; kill -TERM $pid; wait $pid");
    assert_int_equal(rc, 128 + 15);
    assert_int_equal(sh("diff -r kl kl_first"), 0);
    assert_no_temporaries();

    /* one owner: a step into a directory another step is writing is refused */
    rc = sh("true; $S step --in big.npy --out-dir busy --every 50 --steps 400 --set "
            "wall_size=60,60,60 & pid=$!; i=0; while [ ! -e busy/.shoal.lock ] && [ $i -lt 6000 ]; "
            "do sleep 0.01; i=$((i+1)); done; $S step --in in.npy --out-dir busy --steps 2 "
            "--overwrite; echo $? > second.txt; kill -TERM $pid; wait $pid");
    char *second = slurp("second.txt", NULL);
    assert_int_equal(atoi(second), 2);
    free(second);
    assert_err_has("another shoal run");
    assert_no_temporaries();

    /* replay follows the manifest: a frame it does not list is not drawn */
    assert_int_equal(sh("cp st/state_000000.npy st/state_000040.npy && $S render --in st --out "
                        "st_png2 --size 64x48 && ls st_png2 | wc -l"),
                     0);
    assert_int_equal(atoi(g_out), 4);
    /* a frame the manifest lists but that is missing: exit 2 naming it, nothing written */
    assert_int_equal(sh("rm st/state_000020.npy && $S render --in st --out st_png3 --size 64x48"),
                     2);
    assert_err_has("state_000020.npy");
    assert_false(exists("st_png3"));
    assert_no_temporaries();
}

/* F21: a step that fails replaces none of its outputs (a full disk, a file size limit);
 * --out and --checkpoint naming one file is refused. */
static void test_f21_failed_step_writes_nothing(void **state)
{
    (void)state;
    assert_int_equal(sh("$S init --count 1000 --out in1k.npy"), 0);
    assert_int_equal(sh("$S step --in in1k.npy --steps 5 --out same.npy --checkpoint same.npy"), 2);
    assert_err_has("same file");
    assert_false(exists("same.npy"));
    assert_int_equal(sh("$S step --in in1k.npy --steps 5 --out same.npy --checkpoint ./same.npy"),
                     2);
    assert_int_equal(sh("ln -s same.npy link.npy && $S step --in in1k.npy --steps 5 --out "
                        "same.npy --checkpoint link.npy"),
                     2);
    assert_false(exists("same.npy"));
    assert_int_equal(sh("mkdir od && $S step --in in1k.npy --steps 5 --out-dir od --out "
                        "od/manifest.json"),
                     2);
    assert_err_has("--out-dir");
    assert_int_equal(sh("test -z \"$(ls -A od)\""), 0);
    /* a file size limit between a .npy state (24 KB) and a .vtp one (44 KB): the trajectory
     * of .npy frames fits, the .vtp --out does not; nothing of the trajectory appears */
    assert_int_equal(sh("echo OLD > o.vtp"), 0);
    int rc = run_with("trap '' XFSZ; ulimit -f 64",
                      "step --in in1k.npy --out-dir traj --every 1 --steps 2 --out o.vtp");
    assert_int_equal(rc, 2);
    assert_false(exists("traj"));
    assert_int_equal(sh("cat o.vtp"), 0);
    assert_string_equal(g_out, "OLD\n");
    /* the trial's case: room for one of --checkpoint and --out; the old checkpoint stays */
    rc = on_tiny_fs("200k", "echo OLD > tiny/c.ckpt\n" FILL_TINY(
                                "40000") "$S step --in in1k.npy --checkpoint tiny/c.ckpt --out "
                                         "tiny/o.npy --steps 2 2> err.txt; rc=$?\n"
                                         "cat err.txt >&2; [ \"$(cat tiny/c.ckpt)\" = OLD ] || "
                                         "exit 11; [ -e tiny/o.npy ] && exit 12; ls -A tiny | grep "
                                         "-q tmp && exit 13; exit $rc");
    if (rc == 77)
        test_skip_part("F21 on a full disk: no tmpfs can be mounted here");
    else if (rc != 2)
        fail_msg("step onto a full disk: %d (11: checkpoint replaced, 12: --out written, 13: "
                 "temporary left) %s",
                 rc, g_err);
    assert_no_temporaries();
}

/* F22: replay takes only names step writes (state_ + six digits or more): state_5.npy and
 * state_+10.npy are not frames, so state_000005.npy is drawn once, as itself. */
static void test_f22_frame_names(void **state)
{
    (void)state;
    assert_int_equal(sh("$S init --count 500 --out a.npy && $S step --in a.npy --out-dir traj "
                        "--every 10 --steps 20"),
                     0);
    assert_int_equal(sh("mkdir dup && cp traj/state_000000.npy dup/state_000005.npy && cp "
                        "traj/state_000020.npy dup/state_5.npy && cp traj/state_000010.npy "
                        "dup/state_+10.npy && cp traj/state_000010.npy dup/state_0000010.npy"),
                     0);
    assert_int_equal(sh("$S render --in dup --out dup_out --size 64x48"), 0);
    assert_int_equal(sh("ls dup_out | tr '\\n' ' '"), 0);
    assert_string_equal(g_out, "frame_000005.png ");
    assert_int_equal(sh("$S render --in dup/state_000005.npy --out one.png --size 64x48"), 0);
    assert_same_file("dup_out/frame_000005.png", "one.png");
    /* a second replay into the same --out: refused unless --overwrite */
    assert_int_equal(sh("$S render --in traj --out dup_out --size 64x48"), 2);
    assert_err_has("--overwrite");
    assert_int_equal(sh("$S render --in traj --out dup_out --size 64x48 --overwrite && ls dup_out "
                        "| tr '\\n' ' '"),
                     0);
    assert_string_equal(g_out, "frame_000000.png frame_000010.png frame_000020.png ");
    assert_no_temporaries();
}

/* F28: a resumed run's manifest: t0 + step * dt is each frame's t (t0 is the time of its
 * first frame, not the checkpoint's original t0). */
static void test_f28_resumed_manifest_t0(void **state)
{
    (void)state;
    assert_int_equal(sh("$S init --count 300 --out in.npy && $S step --in in.npy --out-dir rs "
                        "--every 5 --steps 15 --checkpoint rs.ckpt && $S step --resume rs.ckpt "
                        "--out-dir rsv --every 5 --steps 10"),
                     0);
    json_value m;
    char err[512];
    assert_int_equal(json_load_file(path("rsv/manifest.json"), JSON_STRICT, &m, err, sizeof err),
                     JSON_OK);
    double t0 = json_get(&m, "t0")->num, dt = json_get(&m, "dt")->num;
    const json_value *fr = json_get(&m, "frames");
    assert_int_equal(fr->count, 3);
    for (int i = 0; i < fr->count; i++) {
        double step = json_get(&fr->items[i], "step")->num, t = json_get(&fr->items[i], "t")->num;
        if (fabs(t0 + step * dt - t) > 1e-12)
            fail_msg("frame %d: t0 %.17g + step %g * dt %.17g != t %.17g", i, t0, step, dt, t);
    }
    assert_true(fabs(t0 - 15 * dt) < 1e-12);
    json_free(&m);
}

/* ---- checkpoints, JSON, stdout -------------------------------------------------------------- */

/* F20: a checkpoint whose values a resume refuses names the file. Offsets from the layout
 * of shoal/io.h; the parameter count is read from the file's header. */
static void test_f20_checkpoint_values_name_file(void **state)
{
    (void)state;
    assert_int_equal(sh("$S init --scene %s/assets/scenes/steer_predator.ini --count 300 --out "
                        "p.npy 2>/dev/null && $S step --scene %s/assets/scenes/steer_predator.ini "
                        "--in p.npy --steps 10 --checkpoint c.ckpt",
                        SHOAL_SOURCE_ROOT, SHOAL_SOURCE_ROOT),
                     0);
    size_t n;
    char *ck = slurp("c.ckpt", &n);
    uint32_t nparams;
    memcpy(&nparams, ck + 12, 4);
    size_t params = 64, pred = params + 4 * (size_t)nparams, pred_vel = pred + 64 * 12,
           pinned = pred_vel + 64 * 12;
    struct {
        const char *name;
        size_t off;
        int kind; /* 0 float NaN, 1 byte 2, 2 u64 max, 3 f64 1e300 */
    } cases[] = {{"pred_nan.ckpt", pred, 0},
                 {"predv_nan.ckpt", pred_vel + 4, 0},
                 {"pin.ckpt", pinned, 1},
                 {"steps.ckpt", 40, 2},
                 {"dt.ckpt", 48, 3}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *b = malloc(n);
        memcpy(b, ck, n);
        if (cases[i].kind == 0) {
            float v = NAN;
            memcpy(b + cases[i].off, &v, 4);
        } else if (cases[i].kind == 1) {
            b[cases[i].off] = 2;
        } else if (cases[i].kind == 2) {
            uint64_t v = UINT64_MAX;
            memcpy(b + cases[i].off, &v, 8);
        } else {
            double v = 1e300;
            memcpy(b + cases[i].off, &v, 8);
        }
        FILE *f = fopen(path(cases[i].name), "wb");
        assert_int_equal(fwrite(b, 1, n, f), n);
        fclose(f);
        free(b);
        assert_int_equal(sh("$S step --resume %s --steps 5 --out o.npy", cases[i].name), 2);
        if (!strstr(g_err, cases[i].name) || strchr(g_err, '\n') != strrchr(g_err, '\n'))
            fail_msg("%s: the message does not name the file in one line: '%s'", cases[i].name,
                     g_err);
        assert_false(exists("o.npy"));
    }
    free(ck);
}

/* F24: JSON outputs are valid for names that are not UTF-8 (each such byte is \ufffd):
 * compare --json, a sweep's manifest.json and sweep.spec; and the writer itself. */
static void test_f24_json_names_not_utf8(void **state)
{
    (void)state;
    /* the one string writer, byte by byte: invalid UTF-8 (a lone 0xff, a truncated
     * sequence, an overlong form, a surrogate) each byte \ufffd; valid UTF-8 as it is */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    json_write_string(f, "a\xff"
                         "b\xc3"
                         "(\xc0\xaf\xed\xa0\x80\xc3\xa9\"\\\n");
    fclose(f);
    assert_string_equal(buf,
                        "\"a\\ufffdb\\ufffd(\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\xc3\xa9\\\"\\\\"
                        "\\u000a\"");
    json_value v;
    assert_int_equal(json_parse(buf, len, JSON_STRICT, &v), 0);
    json_free(&v);
    free(buf);
    if (sh("/usr/bin/python3 -c 'import json'") != 0) {
        test_skip_part("F24: no python3 to load the JSON files");
        return;
    }
    assert_int_equal(sh("$S init --count 100 --out a.npy && cp a.npy \"$(printf 'bad\\377.npy')\" "
                        "&& $S compare \"$(printf 'bad\\377.npy')\" a.npy --json w.json > "
                        "/dev/null"),
                     0);
    assert_int_equal(sh("/usr/bin/python3 -c 'import json; m = json.load(open(\"w.json\", "
                        "encoding=\"utf-8\")); assert m[\"a\"] == \"bad\\ufffd.npy\", m[\"a\"]'"),
                     0);
    assert_int_equal(sh("cp %s/assets/scenes/steer.ini \"$(printf 'sc\\377.ini')\" && $S sweep "
                        "--vary sep_weight=1 --count 10 --steps 1 --scene \"$(printf "
                        "'sc\\377.ini')\" --out swx --quiet",
                        SHOAL_SOURCE_ROOT),
                     0);
    assert_int_equal(sh("/usr/bin/python3 -c 'import json; json.load(open(\"swx/sweep.spec\", "
                        "encoding=\"utf-8\")); m = json.load(open(\"swx/manifest.json\", "
                        "encoding=\"utf-8\")); assert m[\"sweep\"][\"scene\"] == "
                        "\"sc\\ufffd.ini\"'"),
                     0);
}

/* F25: a report that cannot be written to stdout (a full device) is exit 2 with one line,
 * and the command's files are not written. */
static void test_f25_stdout_full(void **state)
{
    (void)state;
    if (sh("test -w /dev/full") != 0) {
        test_skip_part("F25: no /dev/full");
        return;
    }
    assert_int_equal(sh("$S init --count 200 --out a.npy"), 0);
    assert_int_equal(sh("$S compare a.npy a.npy > /dev/full"), 2);
    assert_err_has("standard output");
    assert_int_equal(sh("$S compare a.npy a.npy --json j.json > /dev/full"), 2);
    assert_false(exists("j.json"));
    assert_int_equal(sh("$S diverge --in a.npy --a cpu --b cpu --steps 3 --csv d.csv > /dev/full"),
                     2);
    assert_false(exists("d.csv"));
    assert_int_equal(sh("$S sweep --vary sep_weight=1 --count 50 --steps 2 --out sw --quiet > "
                        "/dev/full"),
                     2);
    assert_false(exists("sw/sweep.csv"));
    assert_int_equal(sh("$S render --in a.npy --out x.png --size 32x24 --stats > /dev/full"), 2);
    assert_false(exists("x.png"));
    assert_int_equal(sh("$S --help > /dev/full"), 2);
    assert_int_equal(sh("$S compare a.npy a.npy > /dev/null"), 0);
    assert_no_temporaries();
}

/* The rule behind F21 and F1 for one process: an atomic output whose stream had a write
 * fail (here its error flag set by a read on a write-only stream) is not committed, even
 * when the flush of the rest succeeds. */
static void test_commit_refuses_failed_write(void **state)
{
    (void)state;
    assert_int_equal(sh("echo OLD > keep.txt"), 0);
    shoal_atomic_file af;
    shoal_error e;
    assert_int_equal(shoal_io_atomic_open(&af, path("keep.txt"), &e), SHOAL_OK);
    fputs("NEW\n", (FILE *)af.file);
    (void)fgetc((FILE *)af.file); /* a write-only stream: sets its error flag */
    assert_true(ferror((FILE *)af.file));
    assert_int_equal(shoal_io_atomic_commit(&af, &e), SHOAL_ERR_IO);
    assert_non_null(strstr(e.message, "keep.txt"));
    assert_int_equal(sh("cat keep.txt"), 0);
    assert_string_equal(g_out, "OLD\n");
    assert_no_temporaries();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_f03_two_sweeps_one_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_f04_resume_during_live_sweep, setup, teardown),
        cmocka_unit_test_setup_teardown(test_f05_resume_scene_changed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_f06_damaged_members, setup, teardown),
        cmocka_unit_test_setup_teardown(test_f07_reused_out_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_f13_signal_sweep, setup, teardown),
        cmocka_unit_test_setup_teardown(test_f14_resume_removes_top_temporaries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_f15_member_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_f16_f17_f27_sweep_options, setup, teardown),
        cmocka_unit_test_setup_teardown(test_f20_checkpoint_values_name_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_f21_failed_step_writes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_f22_frame_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_f24_json_names_not_utf8, setup, teardown),
        cmocka_unit_test_setup_teardown(test_f25_stdout_full, setup, teardown),
        cmocka_unit_test_setup_teardown(test_f26_sweep_plot, setup, teardown),
        cmocka_unit_test_setup_teardown(test_f28_resumed_manifest_t0, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commit_refuses_failed_write, setup, teardown),
    };
    return test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
