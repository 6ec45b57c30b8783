/* SPDX-License-Identifier: MIT */
/* The program's one ffmpeg writer (shoal run --video, shoal render --in DIR --video) and the
 * frame-sequence output that runs on a thread of its own (PNG files and/or that video), so
 * that writing a frame overlaps drawing the next. video.c owns the ffmpeg child process,
 * its temporary (an atomic output of shoal/io.h: removed on failure and on signals) and the
 * check that what ffmpeg wrote is a whole MP4 before it is renamed over the target. */
#ifndef SHOAL_APP_VIDEO_H
#define SHOAL_APP_VIDEO_H

#include "shoal/shoal.h"

#include <stddef.h>
#include <stdint.h>

/* The message for a missing ffmpeg (after "--video: "). */
#define VIDEO_NO_FFMPEG "ffmpeg not found: install it (apt-get install ffmpeg) or use --out DIR"

/* 1 when `ffmpeg -version` runs and exits 0 (ffmpeg on the PATH and working). Ask before
 * any output is created, so that a missing ffmpeg leaves nothing behind. */
int video_ffmpeg_found(void);

typedef struct app_video app_video;

/* Start ffmpeg encoding raw ARGB8888 frames of width x height (H.264, yuv420p, odd sides
 * padded by one pixel, `fps` frames per second) into a temporary beside `path` (which must
 * end in .mp4 and be a new or regular file). The temporary is registered for removal on
 * SIGINT/SIGTERM/SIGHUP/SIGQUIT (and the ffmpeg child killed first). */
shoal_status video_open(app_video **out, const char *path, int width, int height, double fps,
                        shoal_error *e);
/* One frame (width x height pixels, rows stride_px apart). SHOAL_ERR_IO when ffmpeg has
 * exited (its last message in the error). */
shoal_status video_write(app_video *v, const uint32_t *argb, int stride_px, shoal_error *e);
/* Finish: keep = 1 waits for ffmpeg, checks its exit status and that the temporary is a
 * whole MP4 (video_check_mp4), then renames it over the target; any failure removes the
 * temporary, keeps what was at the target and is SHOAL_ERR_IO naming it. keep = 0 stops
 * ffmpeg and removes the temporary. Frees v (NULL is fine). */
shoal_status video_close(app_video *v, int keep, shoal_error *e);
/* Frames written so far. */
long long video_frames(const app_video *v);

/* Is the file at `path` a whole MP4 (ISO BMFF)? Its top-level boxes must tile the file
 * exactly (no box runs past the end, no bytes after the last), start with `ftyp` and
 * include `moov` and `mdat`: what a failed trailer (a full disk, a killed ffmpeg) does not
 * leave. SHOAL_ERR_IO with the reason otherwise. */
shoal_status video_check_mp4(const char *path, shoal_error *e);

/* ---- frame sequences on a writer thread ---------------------------------------------- */

typedef struct frame_out frame_out;

/* A writer for frames of width x height: a thread of its own writes each submitted frame
 * as a PNG (when given a path; png_fast: shoal_io_png_write_fast, else shoal_io_png_write)
 * and into `video` (when not NULL; frame_out then owns it, also when this fails). */
shoal_status frame_out_open(frame_out **out, int width, int height, int png_fast, app_video *video,
                            shoal_error *e);
/* Hand over a copy of a frame (rows stride_px apart) and, when png_path is not NULL, the
 * PNG file to write it to. Returns at once unless the thread is two frames behind (then
 * it waits for it). The first failure of the thread is returned by this call or a later
 * one (and every later frame is dropped). */
shoal_status frame_out_submit(frame_out *o, const uint32_t *argb, int stride_px,
                              const char *png_path, shoal_error *e);
/* Wait until every frame is written; then video_close(video, keep && no failure). The
 * first failure is returned. Frees o (NULL is fine). busy_ms, if not NULL, gets the
 * thread's time spent writing. */
shoal_status frame_out_close(frame_out *o, int keep, double *busy_ms, shoal_error *e);

#endif
