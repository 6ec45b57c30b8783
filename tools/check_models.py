#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The model checklist's figures (issue 37, docs/ARCHITECTURE.md "Where new code goes"), checked
on the tree: every model of SIM_MODELS (src/sim/models.h) is referred to, in code, by at most 5
files under src/ and include/ outside its own file (its enum value, its name as a string, its
file's include, the identifiers of its adapter and table); no `switch` over the models has a
`default:` (a dispatch table indexed by the enum is checked for size instead, so a model missing
a piece does not compile); src/sim/forces_kernel.h holds no intrinsic (core/simd.h's words only);
the model checklist of docs/ARCHITECTURE.md has at most 8 places. Prints the counts; exits 1 when
one does not hold.

usage: check_models.py [SOURCE_ROOT]"""
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
MAX_FILES, MAX_PLACES = 5, 8
PIECES = ("acc consts reach2 variant begin near pair late useful finish ties finish_tie "
          "params hyps live ROWS SKIP_FAR USES_DIR LATE VARIANTS BEGIN_TERM").split()


def read(rel):
    with open(os.path.join(ROOT, rel), errors="replace") as f:
        return f.read()


def code_of(text, python):
    """the text without comments (string literals kept)"""
    if python:
        return "\n".join(line.split("#")[0] for line in text.split("\n"))
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text[i] in "\"'":
            q, j = text[i], i + 1
            while j < n and text[j] != q:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def sources():
    for top in ("src", "include"):
        for dp, dn, fn in os.walk(os.path.join(ROOT, top)):
            dn[:] = [d for d in dn if not d.startswith(("build", "__pycache__"))]
            for f in sorted(fn):
                if f.endswith((".c", ".h", ".cu", ".py", ".pyi", ".pyx")):
                    rel = os.path.relpath(os.path.join(dp, f), ROOT)
                    yield rel, code_of(read(rel), f.endswith((".py", ".pyi", ".pyx")))


def main():
    bad = 0
    models = re.findall(r"X\(SHOAL_MODEL_(\w+),\s*(\w+)\)", read("src/sim/models.h"))
    if not models:
        print("check_models: no SIM_MODELS list in src/sim/models.h")
        return 1
    files = list(sources())
    for enum, name in models:
        own = [rel for rel, code in files if rel.startswith("src/sim/models/") and
               re.search(r"RULE_MODEL_TRAITS\(\s*%s\s*," % name, code)]
        if len(own) != 1:
            print("FAIL %s: %d files define its adapter (RULE_MODEL_TRAITS)" % (name, len(own)))
            bad = 1
            continue
        ids = r"\bSHOAL_MODEL_%s\b|%s|\b%s_(?:%s)\b|\b(?:model|group|gpu_model)_%s\b" % (
            enum, re.escape(own[0][len("src/"):]), name, "|".join(PIECES), name)
        pat, lit = re.compile(ids), re.compile(r'"%s"' % name)
        hits = []
        for rel, code in files:
            if rel == own[0]:
                continue
            # a string "name" counts outside the models' files (another model may have a
            # parameter of that name: classic's fov)
            if pat.search(code) or (not rel.startswith("src/sim/models/") and lit.search(code)):
                hits.append(rel)
        ok = len(hits) <= MAX_FILES
        bad |= not ok
        print("%s %-8s %d files outside %s: %s" % ("ok  " if ok else "FAIL", name, len(hits),
                                                   own[0], " ".join(hits)))
    # no switch over the models with a default
    for rel, code in files:
        for m in re.finditer(r"switch\s*\(([^)]*)\)\s*\{", code):
            if "model" not in m.group(1):
                continue
            depth, i = 1, m.end()
            while depth and i < len(code):
                depth += {"{": 1, "}": -1}.get(code[i], 0)
                i += 1
            if re.search(r"\bdefault\s*:", code[m.end():i]):
                print("FAIL %s: a switch over %s has a default:" % (rel, m.group(1).strip()))
                bad = 1
    # no intrinsic in the force kernel
    kernel = code_of(read("src/sim/forces_kernel.h"), False)
    intr = sorted(set(re.findall(r"\b_mm\d*_\w+|\b__m(?:128|256|512)\w*|\b__mmask\d+", kernel)))
    print("%s forces_kernel.h: %d intrinsics %s" % ("ok  " if not intr else "FAIL", len(intr),
                                                     " ".join(intr)))
    bad |= bool(intr)
    # the model checklist: the numbered places under "**A model**"
    arch = read("docs/ARCHITECTURE.md")
    places, at = 0, arch.find("**A model**")
    lines = arch[at:].split("\n") if at >= 0 else []
    k = next((i for i, line in enumerate(lines) if line.startswith("1. ")), len(lines))
    while k < len(lines) and (re.match(r"\d+\. ", lines[k]) or lines[k].startswith("   ")):
        places += bool(re.match(r"\d+\. ", lines[k]))
        k += 1
    ok = 0 < places <= MAX_PLACES
    print("%s docs/ARCHITECTURE.md: a model is %d places" % ("ok  " if ok else "FAIL", places))
    bad |= not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
