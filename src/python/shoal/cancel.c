/* SPDX-License-Identifier: MIT */
/* Ctrl-C during a long call (a step, a verify, a sweep member), which runs with the GIL
 * released: Python's own SIGINT handler only sets a flag that the interpreter reads when it
 * gets back to Python code, so the call would run to its end. While such a call runs on the
 * main thread (the only one Python gives KeyboardInterrupt to), cancel_begin puts a handler
 * in front of Python's: it raises the flag the library polls (shoal_verify_set_cancel,
 * shoal_sweep_set_cancel, the step loop's chunks) and then calls Python's handler, so Python
 * sees the signal too. cancel_end puts Python's handler back and lets Python run its handler
 * (PyErr_CheckSignals: KeyboardInterrupt by default). Calls on other threads get no flag. */
#include "module.h"

#include <signal.h>
#include <string.h>

static volatile int cancel_raised;
static struct sigaction python_action; /* the handler we stand in front of */
static int installed;
static unsigned long main_thread;

/* The interpreter's main thread (the module may be imported from another). */
void cancel_init(void)
{
    main_thread = PyThread_get_thread_ident();
    PyObject *threading = PyImport_ImportModule("threading");
    PyObject *t = threading ? PyObject_CallMethod(threading, "main_thread", NULL) : NULL;
    PyObject *id = t ? PyObject_GetAttrString(t, "ident") : NULL;
    if (id && PyLong_Check(id))
        main_thread = PyLong_AsUnsignedLong(id);
    Py_XDECREF(id);
    Py_XDECREF(t);
    Py_XDECREF(threading);
    PyErr_Clear();
}

static void on_sigint(int sig, siginfo_t *info, void *context)
{
    cancel_raised = 1;
    if (python_action.sa_flags & SA_SIGINFO) {
        if (python_action.sa_sigaction)
            python_action.sa_sigaction(sig, info, context);
    } else if (python_action.sa_handler != SIG_DFL && python_action.sa_handler != SIG_IGN &&
               python_action.sa_handler) {
        python_action.sa_handler(sig);
    }
}

const volatile int *cancel_begin(void)
{
    if (installed || PyThread_get_thread_ident() != main_thread)
        return NULL;
    struct sigaction cur;
    if (sigaction(SIGINT, NULL, &cur) != 0)
        return NULL;
    /* Ctrl-C that kills the process, or is ignored, stays so: only Python's handler is chained */
    if (!(cur.sa_flags & SA_SIGINFO) && (cur.sa_handler == SIG_DFL || cur.sa_handler == SIG_IGN))
        return NULL;
    struct sigaction ours;
    memset(&ours, 0, sizeof ours);
    ours.sa_sigaction = on_sigint;
    ours.sa_flags = SA_SIGINFO | (cur.sa_flags & SA_ONSTACK);
    sigemptyset(&ours.sa_mask);
    python_action = cur;
    cancel_raised = 0;
    if (sigaction(SIGINT, &ours, NULL) != 0)
        return NULL;
    installed = 1;
    return &cancel_raised;
}

int cancel_end(const volatile int *flag)
{
    if (!flag)
        return 0;
    sigaction(SIGINT, &python_action, NULL);
    installed = 0;
    int was = cancel_raised;
    cancel_raised = 0;
    if (!was)
        return 0;
    /* Python's handler ran inside ours; let the interpreter act on it now */
    if (PyErr_CheckSignals() < 0)
        return -1;
    return 1;
}
