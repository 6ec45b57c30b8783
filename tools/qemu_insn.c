/* SPDX-License-Identifier: MIT */
/* qemu_insn: a QEMU TCG plugin that counts the guest instructions a program executes, in all
 * and in the functions whose symbol contains the text of a `fn=` argument (up to 8; the
 * program's own symbol table, as QEMU loads it): how docs/ARM.md compares the NEON kernels'
 * widths without an ARM machine. Counting instructions is not
 * timing (a core's throughput differs per instruction), but two builds of one kernel that
 * differ in lanes per instruction compare well by it. Built for the host and loaded by
 * qemu-user (Debian's qemu-user has plugin support but ships no plugin):
 *   cc -shared -fPIC -O2 -o qemu_insn.so tools/qemu_insn.c
 *   qemu-aarch64 -plugin ./qemu_insn.so,fn=_neon,fn=grid_ PROGRAM ARGS
 * Prints "insns TOTAL" and "insns TEXT COUNT" per fn= to stderr at exit.
 * Single-threaded guests only (the counters are plain adds: run with --threads 1).
 *
 * The plugin API (QEMU's include/qemu/qemu-plugin.h, version 1 as in QEMU 7.2): the few
 * declarations used, written out so that no QEMU source is needed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const char *qemu_plugin_insn_symbol(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn,
                                                enum qemu_plugin_op op, void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
                                              void *ptr, uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define MAX_NAMES 8
static uint64_t total;
static int name_count;
static const char *names[MAX_NAMES];
static uint64_t in_name[MAX_NAMES];

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &total, n);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        const char *sym = qemu_plugin_insn_symbol(insn);
        for (int k = 0; sym && k < name_count; k++)
            if (strstr(sym, names[k]))
                qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64,
                                                           &in_name[k], 1);
    }
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
    (void)id;
    (void)p;
    fprintf(stderr, "insns %llu\n", (unsigned long long)total);
    for (int k = 0; k < name_count; k++)
        fprintf(stderr, "insns %s %llu\n", names[k], (unsigned long long)in_name[k]);
}

__attribute__((visibility("default"))) int
qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
    (void)info;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "fn=", 3) == 0 && argv[i][3] && name_count < MAX_NAMES) {
            names[name_count++] = argv[i] + 3;
        } else {
            fprintf(stderr, "qemu_insn: unknown argument '%s' (fn=TEXT, up to %d)\n", argv[i],
                    MAX_NAMES);
            return -1;
        }
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
