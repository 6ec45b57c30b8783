/* SPDX-License-Identifier: MIT */
/* Outputs, through the real program ($SHOAL_EXE): what the atomic writer (src/io/atomic.c)
 * does with what is already at an output path, signals in the middle of a write, and the
 * check of every output before a command starts its work (docs/ROBUSTNESS.md, "Outputs").
 *
 * - a character device (a copy of /dev/null made with mknod, so that a regression cannot
 *   replace the machine's own /dev/null; root only, else skipped) stays a device;
 * - a FIFO is written in place: its reader gets exactly the bytes of a regular output;
 * - a symlink stays a link and its target (another directory; dangling; a chain) is replaced;
 * - a directory is refused; a read-only file is refused (replaced when root, as fopen
 *   would), and a replaced file keeps its mode;
 * - SIGTERM or SIGINT while a 48 MB state is being written: the process dies by the signal
 *   and leaves no ".NAME.tmp.XXXXXX";
 * - an output that cannot be created (missing directory) among several: exit 2 and no
 *   output at all; SIGTERM to `shoal run --headless` ends it, nothing half-written. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/cli_harness.h"

#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int g_has_render;

static void expect_same_file(const char *a, const char *b)
{
    size_t na, nb;
    char *da = read_all(path(a), &na), *db = read_all(path(b), &nb);
    if (!da || !db || na != nb || memcmp(da, db, na) != 0)
        fail_msg("%s and %s differ (%zu and %zu bytes)", a, b, da ? na : 0, db ? nb : 0);
    free(da);
    free(db);
}

/* A temporary of the atomic writer (".NAME.tmp.XXXXXX") in the scratch directory or one
 * level below; its name in `found` (may be NULL). */
static int find_temporary(char *found, size_t size)
{
    const char *dirs[] = {"", "real", "sub"};
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
        DIR *dir = opendir(path(dirs[d]));
        if (!dir)
            continue;
        struct dirent *de;
        while ((de = readdir(dir))) {
            if (de->d_name[0] == '.' && strstr(de->d_name, ".tmp.")) {
                if (found)
                    snprintf(found, size, "%s/%s", dirs[d], de->d_name);
                closedir(dir);
                return 1;
            }
        }
        closedir(dir);
    }
    return 0;
}

static void expect_no_temporaries(const char *what)
{
    char name[600];
    if (find_temporary(name, sizeof name))
        fail_msg("%s: left the temporary file %s behind", what, name);
}

static int setup(void **state)
{
    (void)state;
    if (cli_setup("outputs"))
        return -1;
    run("--help");
    size_t n;
    char *help = read_all(path("stdout.txt"), &n);
    g_has_render = help && strstr(help, "render") != NULL;
    free(help);
    if (run("init --count 500 --seed 4 --out a.npy") != 0 ||
        run("step --in a.npy --out ref.npy --threads 1") != 0)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return cli_teardown();
}

/* ---- what is at the path -------------------------------------------------------------- */

/* A character device stays one. Made here with mknod as a copy of /dev/null (1, 3), so
 * that the check cannot cost the machine its /dev/null when it fails. */
static void test_device_in_place(void **state)
{
    (void)state;
    if (geteuid() != 0 || mknod(path("null"), S_IFCHR | 0666, makedev(1, 3)) != 0) {
        printf("  skipped: mknod needs root (euid %d): %s\n", (int)geteuid(), strerror(errno));
        skip();
    }
    const char *cmds[] = {
        "step --in a.npy --out null",
        "step --in a.npy --out ok1.npy --trace null",
        "compare a.npy ref.npy --json null",
        "diverge --in a.npy --a cpu --b cpu --steps 2 --csv null",
        "init --count 100 --out null",
        "render --in a.npy --out null --size 32x24",
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        if (!g_has_render && strncmp(cmds[i], "render", 6) == 0)
            continue;
        int rc = run("%s", cmds[i]);
        struct stat st;
        if (lstat(path("null"), &st) != 0 || !S_ISCHR(st.st_mode))
            fail_msg("'shoal %s' replaced the character device (mode %o)", cmds[i],
                     (unsigned)st.st_mode);
        if (rc != 0 && !(rc == 1 && strncmp(cmds[i], "compare", 7) == 0))
            fail_msg("'shoal %s' exited %d: %s", cmds[i], rc, g_err);
        expect_no_temporaries(cmds[i]);
    }
}

/* A FIFO is written in place: a reader gets the very bytes a regular file gets. */
static void test_fifo_in_place(void **state)
{
    (void)state;
    unlink(path("fifo"));
    assert_int_equal(mkfifo(path("fifo"), 0644), 0);
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd %s && { timeout 60 cat fifo > from_fifo.npy & %s step --in a.npy --out fifo "
             "--threads 1 "
             "2> stderr.txt; echo $? > rc.txt; wait; }",
             g_dir, g_exe);
    assert_int_equal(system(cmd), 0);
    size_t n;
    char *rc = read_all(path("rc.txt"), &n);
    assert_non_null(rc);
    assert_int_equal(atoi(rc), 0);
    free(rc);
    struct stat st;
    assert_int_equal(lstat(path("fifo"), &st), 0);
    if (!S_ISFIFO(st.st_mode))
        fail_msg("the FIFO was replaced (mode %o)", (unsigned)st.st_mode);
    expect_same_file("from_fifo.npy", "ref.npy");
    expect_no_temporaries("step --out FIFO");
}

/* A symlink stays a link; its target, in another directory, is replaced (temporary and
 * rename there); a dangling link creates its target; a chain is followed to its end. */
static void test_symlink_target(void **state)
{
    (void)state;
    mkdir(path("real"), 0755);
    write_text("real/target.npy", "old contents\n");
    unlink(path("link.npy"));
    assert_int_equal(symlink("real/target.npy", path("link.npy")), 0);
    assert_int_equal(run("step --in a.npy --out link.npy --threads 1"), 0);
    struct stat st;
    assert_int_equal(lstat(path("link.npy"), &st), 0);
    if (!S_ISLNK(st.st_mode))
        fail_msg("the symlink was replaced by a file (mode %o)", (unsigned)st.st_mode);
    expect_same_file("real/target.npy", "ref.npy");
    expect_no_temporaries("step --out symlink");

    /* dangling: the target is created where the link points */
    unlink(path("dangling.npy"));
    unlink(path("real/new.npy"));
    assert_int_equal(symlink("real/new.npy", path("dangling.npy")), 0);
    assert_int_equal(run("step --in a.npy --out dangling.npy --threads 1"), 0);
    assert_int_equal(lstat(path("dangling.npy"), &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    expect_same_file("real/new.npy", "ref.npy");

    /* a chain of two links, the second relative to its own directory */
    unlink(path("chain.npy"));
    unlink(path("real/hop.npy"));
    unlink(path("real/end.npy"));
    assert_int_equal(symlink("end.npy", path("real/hop.npy")), 0);
    assert_int_equal(symlink("real/hop.npy", path("chain.npy")), 0);
    assert_int_equal(run("step --in a.npy --out chain.npy --threads 1"), 0);
    assert_int_equal(lstat(path("real/hop.npy"), &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    expect_same_file("real/end.npy", "ref.npy");

    /* a link to a directory is refused like the directory */
    unlink(path("dirlink"));
    assert_int_equal(symlink("real", path("dirlink")), 0);
    int rc = run("step --in a.npy --out dirlink");
    if (rc != 2 || !strstr(g_err, "is a directory"))
        fail_msg("step --out LINK-TO-DIR: exit %d (%s)", rc, g_err);
    expect_no_temporaries("step --out LINK-TO-DIR");
}

/* A directory is refused (exit 2, one line) and left as it was. */
static void test_directory_refused(void **state)
{
    (void)state;
    mkdir(path("adir"), 0755);
    const char *cmds[] = {
        "step --in a.npy --out adir",
        "init --count 10 --out adir",
        "compare a.npy ref.npy --json adir",
        "step --in a.npy --out x.npy --trace adir",
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        int rc = run("%s", cmds[i]);
        if (rc != 2 || !strstr(g_err, "adir: is a directory"))
            fail_msg("'shoal %s': exit %d, expected 2 and 'adir: is a directory' (%s)", cmds[i], rc,
                     g_err);
        if (strchr(g_err, '\n') != g_err + strlen(g_err) - 1)
            fail_msg("'shoal %s': more than one line: %s", cmds[i], g_err);
        struct stat st;
        assert_int_equal(lstat(path("adir"), &st), 0);
        assert_true(S_ISDIR(st.st_mode));
        assert_false(exists("x.npy"));
        expect_no_temporaries(cmds[i]);
    }
}

/* A read-only existing output is refused as fopen would refuse it: exit 2, old contents
 * kept; root may write it (as with fopen) and then it keeps its mode 0444. A replaced file
 * keeps its mode (0640 stays 0640, whatever the umask). */
static void test_read_only_and_mode(void **state)
{
    (void)state;
    write_text("ro.npy", "old contents\n");
    assert_int_equal(chmod(path("ro.npy"), 0444), 0);
    int rc = run("step --in a.npy --out ro.npy --threads 1");
    struct stat st;
    assert_int_equal(stat(path("ro.npy"), &st), 0);
    if (geteuid() == 0) {
        if (rc != 0)
            fail_msg("root: step --out READ-ONLY: exit %d (%s)", rc, g_err);
        expect_same_file("ro.npy", "ref.npy");
        assert_int_equal(st.st_mode & 07777, 0444);
    } else {
        if (rc != 2 || !strstr(g_err, "ro.npy") || !strstr(g_err, "Permission denied"))
            fail_msg("step --out READ-ONLY: exit %d, expected 2 naming the file (%s)", rc, g_err);
        size_t n;
        char *got = read_all(path("ro.npy"), &n);
        assert_non_null(got);
        assert_string_equal(got, "old contents\n");
        free(got);
    }
    expect_no_temporaries("step --out READ-ONLY");

    write_text("mode.npy", "old contents\n");
    assert_int_equal(chmod(path("mode.npy"), 0640), 0);
    assert_int_equal(run("step --in a.npy --out mode.npy --threads 1"), 0);
    assert_int_equal(stat(path("mode.npy"), &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    expect_same_file("mode.npy", "ref.npy");
}

/* ---- signals -------------------------------------------------------------------------- */

static pid_t spawn(char *const argv[])
{
    pid_t pid = fork();
    if (pid == 0) {
        if (chdir(g_dir) != 0)
            _exit(127);
        /* whatever the test runner ignores, the child gets the defaults, as from a shell */
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        if (!freopen("/dev/null", "w", stdout) || !freopen("stderr_child.txt", "w", stderr))
            _exit(127);
        execv(g_exe, argv);
        _exit(127);
    }
    return pid;
}

/* SIGTERM or SIGINT while `shoal init` writes a 48 MB state: the child is stopped as soon
 * as its temporary appears (so the signal is sure to come mid-write), signalled and
 * continued; it must die by that signal and leave no temporary and no output. */
static void test_signal_mid_write(void **state)
{
    (void)state;
    int caught = 0;
    for (int attempt = 0; attempt < 12 && caught < 4; attempt++) {
        int sig = attempt % 2 ? SIGINT : SIGTERM;
        unlink(path("big.npy"));
        char *argv[] = {(char *)g_exe, "init", "--count", "2000000", "--out", "big.npy", NULL};
        pid_t pid = spawn(argv);
        assert_true(pid > 0);
        int status = 0, stopped = 0;
        for (;;) {
            pid_t w = waitpid(pid, &status, WNOHANG);
            if (w == pid)
                break; /* finished before we saw its temporary: try again */
            if (find_temporary(NULL, 0)) {
                kill(pid, SIGSTOP);
                waitpid(pid, &status, WUNTRACED);
                if (WIFSTOPPED(status) && find_temporary(NULL, 0)) {
                    stopped = 1;
                    kill(pid, sig);
                }
                kill(pid, SIGCONT);
                waitpid(pid, &status, 0);
                break;
            }
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
        if (!stopped)
            continue;
        caught++;
        if (!WIFSIGNALED(status) || WTERMSIG(status) != sig)
            fail_msg("signal %d mid-write: the child did not die by it (status 0x%x)", sig, status);
        expect_no_temporaries("a signal in the middle of a write");
        if (exists("big.npy"))
            fail_msg("signal %d mid-write: big.npy exists", sig);
    }
    printf("  %d signals sent in the middle of a write\n", caught);
    if (caught == 0)
        fail_msg("never saw the temporary of a 48 MB write in 12 tries");
}

/* Whether run --out frames has written its third frame (into the directory's staging
 * directory, where frames stay until the run ends). */
static int third_frame_written(void)
{
    glob_t g;
    int found = glob(path("frames/.shoal-stage.tmp.*/frame_00002.png"), 0, NULL, &g) == 0;
    globfree(&g);
    return found || exists("frames/frame_00002.png");
}

/* SIGTERM to `shoal run --headless` once it has written a frame: it stops (exit 130 after
 * the frame, or killed by SIGTERM when the frame takes over a second), keeps the frames it
 * made (moved out of the staging directory) and leaves no temporary. */
static void test_sigterm_run(void **state)
{
    (void)state;
    if (!g_has_render)
        skip();
    char *argv[] = {(char *)g_exe, "run",       "--headless", "--count", "2000",
                    "--frames",    "100000",    "--size",     "64x48",   "--out",
                    "frames",      "--threads", "1",          NULL};
    pid_t pid = spawn(argv);
    assert_true(pid > 0);
    int status = 0;
    for (int i = 0; i < 600000; i++) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            fail_msg("shoal run ended by itself (status 0x%x)", status);
        if (third_frame_written())
            break;
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGTERM);
    waitpid(pid, &status, 0);
    int graceful = WIFEXITED(status) && WEXITSTATUS(status) == 130;
    int killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM;
    if (!graceful && !killed)
        fail_msg("shoal run after SIGTERM: status 0x%x", status);
    if (graceful && !exists("frames/frame_00002.png"))
        fail_msg("shoal run after SIGTERM: the frames it made were not kept");
    /* (killed by the signal itself, its staging directory stays for the next run into the
     * directory to remove, as after SIGKILL) */
    DIR *d = opendir(path("frames"));
    assert_non_null(d);
    struct dirent *de;
    while ((de = readdir(d)))
        if (graceful && de->d_name[0] == '.' && strstr(de->d_name, ".tmp."))
            fail_msg("shoal run left frames/%s", de->d_name);
    closedir(d);
}

/* ---- every output checked before the work ------------------------------------------- */

/* One output in a missing directory among several: exit 2, one line naming it, and none
 * of the others written. */
static void test_outputs_checked_first(void **state)
{
    (void)state;
    struct {
        const char *args, *left, *named;
        int render;
    } cases[] = {
        {"step --in a.npy --out nodir/b.npy --trace t1.json", "t1.json", "nodir/b.npy", 0},
        {"step --in a.npy --out b1.npy --trace nodir/t.json", "b1.npy", "nodir/t.json", 0},
        {"init --count 10 --out nodir/x.npy", NULL, "nodir/x.npy", 0},
        {"compare a.npy ref.npy --json nodir/c.json", NULL, "nodir/c.json", 0},
        {"diverge --in a.npy --a cpu --b cpu --steps 2 --csv nodir/d.csv", NULL, "nodir/d.csv", 0},
        {"render --in a.npy --out f.png --size 32x24 --trace nodir/t.json", "f.png", "nodir/t.json",
         1},
        {"run --headless --count 100 --frames 2 --size 32x24 --out frames2 --trace nodir/t.json",
         "frames2", "nodir/t.json", 1},
        {"run --headless --count 100 --frames 2 --size 32x24 --out frames3 --video nodir/v.mp4",
         "frames3", "nodir/v.mp4", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].render && !g_has_render)
            continue;
        int rc = run("%s", cases[i].args);
        if (rc != 2 || !strstr(g_err, cases[i].named) || !strstr(g_err, "No such file"))
            fail_msg("'shoal %s': exit %d, expected 2 naming %s (%s)", cases[i].args, rc,
                     cases[i].named, g_err);
        if (strchr(g_err, '\n') != g_err + strlen(g_err) - 1)
            fail_msg("'shoal %s': more than one line: %s", cases[i].args, g_err);
        if (cases[i].left && exists(cases[i].left))
            fail_msg("'shoal %s' exited 2 and left %s", cases[i].args, cases[i].left);
        assert_false(exists("nodir"));
        expect_no_temporaries(cases[i].args);
    }
}

/* Two outputs that name one file, in any command: refused before the work, exit 2, one
 * line, nothing written (issue 33 F21: one process kept the state, MPI the checkpoint). */
static void test_same_file_refused(void **state)
{
    (void)state;
    if (symlink("s2.npy", path("same_link.npy")) != 0)
        fail_msg("symlink: %s", strerror(errno));
    if (run("step --in a.npy --out s2.npy --threads 1") != 0)
        fail_msg("step: %s", g_err);
    const char *cases[] = {
        "step --in a.npy --out s.npy --checkpoint s.npy",
        "step --in a.npy --out ./s.npy --checkpoint s.npy",
        "step --in a.npy --out same_link.npy --checkpoint s2.npy --steps 3",
        "step --in a.npy --out s.npy --trace s.npy",
        "render --in a.npy --out s.png --size 32x24 --trace s.png",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (strncmp(cases[i], "render", 6) == 0 && !g_has_render)
            continue;
        int rc = run("%s", cases[i]);
        if (rc != 2 || !strstr(g_err, "name the same file") ||
            strchr(g_err, '\n') != g_err + strlen(g_err) - 1)
            fail_msg("'shoal %s': exit %d, %s", cases[i], rc, g_err);
        assert_false(exists("s.npy"));
        assert_false(exists("s.png"));
        expect_same_file("s2.npy", "ref.npy"); /* not replaced */
        expect_no_temporaries(cases[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_in_place),    cmocka_unit_test(test_fifo_in_place),
        cmocka_unit_test(test_symlink_target),     cmocka_unit_test(test_directory_refused),
        cmocka_unit_test(test_read_only_and_mode), cmocka_unit_test(test_signal_mid_write),
        cmocka_unit_test(test_sigterm_run),        cmocka_unit_test(test_outputs_checked_first),
        cmocka_unit_test(test_same_file_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
