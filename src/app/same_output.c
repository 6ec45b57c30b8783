/* SPDX-License-Identifier: MIT */
/* app_same_output (outdir.h): whether two output paths name one file, after links. Its own
 * file because the option parser (options.c) needs it and the command-line fuzzer links the
 * parser without the rest of the output directories' code. */
#include "app/outdir.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The file `path` names, symbolic links resolved ("x", "./x" and a link to x are one). */
static void canonical(const char *path, char *out, size_t size)
{
    char cur[PATH_MAX], buf[PATH_MAX];
    snprintf(cur, sizeof cur, "%s", path);
    for (int depth = 0; depth < 40; depth++) {
        if (realpath(cur, buf)) {
            snprintf(out, size, "%s", buf);
            return;
        }
        struct stat st;
        if (lstat(cur, &st) == 0 && S_ISLNK(st.st_mode)) { /* dangling: where it points */
            char link[PATH_MAX];
            ssize_t n = readlink(cur, link, sizeof link - 1);
            if (n < 0)
                break;
            link[n] = 0;
            const char *slash = strrchr(cur, '/');
            int w = link[0] == '/' || !slash
                        ? snprintf(buf, sizeof buf, "%s", link)
                        : snprintf(buf, sizeof buf, "%.*s/%s", (int)(slash - cur), cur, link);
            if (w < 0 || (size_t)w >= sizeof buf)
                break;
            memcpy(cur, buf, sizeof cur);
            continue;
        }
        break;
    }
    /* a file not there yet: its directory's real path and its name */
    const char *slash = strrchr(cur, '/');
    char dir[PATH_MAX];
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", slash == cur ? 1 : (int)(slash - cur), cur);
    else
        snprintf(dir, sizeof dir, ".");
    if (!realpath(dir, buf))
        memcpy(buf, dir, sizeof buf);
    int w = snprintf(out, size, "%s/%s", buf, slash ? slash + 1 : cur);
    if (w < 0 || (size_t)w >= size)
        snprintf(out, size, "%s", path); /* too long to resolve: compared as given */
}

int app_same_output(const char *a, const char *b)
{
    if (!a || !b)
        return 0;
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char ca[PATH_MAX + 256], cb[PATH_MAX + 256];
    canonical(a, ca, sizeof ca);
    canonical(b, cb, sizeof cb);
    return strcmp(ca, cb) == 0;
}
