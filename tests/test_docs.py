#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""What README.md and docs/ point at exists: every relative link ([text](path) and
[text](path#anchor), the anchor a heading of the target), every repository path they cite
(`src/sim/sim.c`, tools/device.sh, docs/results/..., a bare DESIGN.md), and no
"(issue NN)" stands alone as the reason for something; a section cited by its title
(docs/NAME.md "Title") is a heading of that document (the issues are not in the
repository: say what the issue asked); every file of docs/results/ is linked from a
document. Also: only tests/test_compat.c defines SHOAL_ALLOW_0_1 (the tree builds without
the 0.1 names, docs/LIBRARY.md).

A cited path may hold a placeholder (NAME, N, *, {a,b}, <x>): it must then match at least one
file, or its folder exist. Paths under build folders, $OUT or /tmp are outputs, not cited
files. Prints every problem as FILE:LINE: what; exits 1 if there is one.
Usage: test_docs.py [SOURCE_ROOT]"""
import glob
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), ".."))
TOP = ("src", "include", "tests", "tools", "docs", "assets", "examples", ".ci", "shared")
# paths that name outputs or other machines' files, never the repository's
OUTPUT = re.compile(r"^(build[^/]*|out|tmp|/|\$|~|\.\./)")
# a placeholder in a path: upper-case word of 1+ letters as a whole component part, *, {}, <>
PLACEHOLDER = re.compile(r"[*{}<>\[\]]|(?<![A-Za-z])(?:[A-Z][A-Z0-9_]*)(?![a-z])")


def documents():
    docs = ["README.md"] + sorted(
        os.path.relpath(d, ROOT)
        for d in glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True))
    return [d for d in docs if os.path.exists(os.path.join(ROOT, d))]


def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation but - and _ dropped, spaces to -"""
    h = re.sub(r"[`*]", "", heading.strip().lower())
    h = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", h)
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def headings(path):
    """the titles of a document's sections, without markup: its headings, and the bold or
    plain words that open a paragraph or a list item ("**Images (`shoal render`).**")"""
    out, in_code, prev = [], False, ""
    for line in open(path, encoding="utf-8"):
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        m = re.match(r"#{1,6}\s+(.*)", line)
        if m:
            out.append(re.sub(r"[`*]", "", m.group(1)).strip())
        elif re.match(r"\s*(?:- |\d+\. )?\*\*", line) or (not prev.strip() and line.strip()):
            out.append(re.sub(r"[`*]", "", re.sub(r"^\s*(?:- |\d+\. )", "", line)).strip())
        prev = line
    return out


def anchors(path):
    out, seen = set(), {}
    in_code = False
    for line in open(path, encoding="utf-8"):
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        m = re.match(r"#{1,6}\s+(.*)", line)
        if m and not in_code:
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else f"{s}-{n}")
    return out


def made_by_tree(rel):
    """a path the tree makes: a program built from rel.c (tools/lod_error), an executable
    target of its folder's meson.build (src/app/shoal), or an output folder named by a tool"""
    folder, name = os.path.split(rel)
    if "." in name or not os.path.isdir(os.path.join(ROOT, folder)):
        return False
    if any(os.path.exists(os.path.join(ROOT, rel + ext)) for ext in (".c", ".cu", ".py", ".sh")):
        return True
    build = os.path.join(ROOT, folder, "meson.build")
    if os.path.exists(build) and re.search(r"executable\(\s*'%s'" % re.escape(name),
                                           open(build, encoding="utf-8").read()):
        return True
    for sub in ("tools", "src", "tests"):
        for base, _, files in os.walk(os.path.join(ROOT, sub)):
            for f in files:
                if f.endswith((".py", ".sh", ".c")) and \
                        rel in open(os.path.join(base, f), encoding="utf-8", errors="replace").read():
                    return True
    return False


def exists(rel):
    """rel, relative to the root: a file or folder, or with a placeholder a match (the name
    of a document, NAME.md, is never a placeholder)"""
    rel = rel.rstrip("/")
    if os.path.exists(os.path.join(ROOT, rel)) or made_by_tree(rel):
        return True
    if not re.search(r"[*{}<>\[\]]", rel) and (rel.endswith(".md") or not PLACEHOLDER.search(rel)):
        return False
    parts = rel.split("/")
    pattern = "/".join(re.sub(PLACEHOLDER, "*", p) if PLACEHOLDER.search(p) else p
                       for p in parts)
    if glob.glob(os.path.join(ROOT, pattern)):
        return True
    # a placeholder only in the file name: its folder must exist
    return PLACEHOLDER.search(parts[-1]) and not any(PLACEHOLDER.search(p) for p in parts[:-1]) \
        and os.path.isdir(os.path.join(ROOT, *parts[:-1]))


def cited_paths(line):
    """repository paths a line of text cites: tokens that start with a top folder of the
    tree and name a file or folder, and bare upper-case NAME.md documents"""
    for m in re.finditer(r"(?<![\w./$-])((?:%s)/[\w./*{},<>+-]*[\w*}>/])" %
                         "|".join(re.escape(t) for t in TOP), line):
        yield m.group(1)
    for m in re.finditer(r"(?<![\w./$-])([A-Z][A-Z0-9_]+\.md)\b", line):
        yield m.group(1)


LINKED = set()


def check_document(doc, problems):
    path = os.path.join(ROOT, doc)
    here = os.path.dirname(doc)
    in_code = False
    for no, line in enumerate(open(path, encoding="utf-8"), 1):
        where = f"{doc}:{no}"
        if line.lstrip().startswith("```"):
            in_code = not in_code
        # relative links (also inside code blocks they are not links: skip those)
        if not in_code:
            for m in re.finditer(r"\]\(([^)\s]+)\)", line):
                target = m.group(1)
                if re.match(r"[a-z]+:", target):
                    continue
                file_part, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(here, file_part)) if file_part else doc
                LINKED.add(dest)
                if not os.path.exists(os.path.join(ROOT, dest)):
                    problems.append(f"{where}: link to {target}: no {dest} in the repository")
                elif anchor and dest.endswith(".md") and \
                        anchor not in anchors(os.path.join(ROOT, dest)):
                    problems.append(f"{where}: link to {target}: {dest} has no heading "
                                    f"with the anchor #{anchor}")
            if re.search(r"\((?:see )?issues? \d+(?:(?:, | and |-)\d+)*\)", line, re.I):
                problems.append(f"{where}: a bare \"(issue NN)\": the issues are not in the "
                                "repository; say what it asked")
        # a section cited by its title: docs/NAME.md "Title" or NAME.md, "Title" (the quoted
        # words start a heading of that document)
        if not in_code:
            for m in re.finditer(r"\b((?:docs/)?[A-Z][A-Z0-9_]*\.md),? \(?\"([^\"]+)\"", line):
                name, title = m.group(1), re.sub(r"[`*]", "", m.group(2)).strip()
                target = next((c for c in (os.path.join(here, name), name, os.path.join("docs", name))
                               if os.path.isfile(os.path.join(ROOT, c))), None)
                if target and not any(h.startswith(title) for h in headings(os.path.join(ROOT, target))):
                    problems.append(f"{where}: cites {name}, \"{title}\": no such section there")
        # cited repository paths, in text and code alike
        for p in cited_paths(line):
            p = p.rstrip(".,;:")
            if OUTPUT.match(p):
                continue
            candidates = [p] if "/" in p else [os.path.join(here, p), p]
            if not any(exists(c) for c in candidates):
                problems.append(f"{where}: cites {p}, which is not in the repository")


def check_allow_0_1(problems):
    """the 0.1 names are allowed in tests/test_compat.c alone"""
    for base, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith(("build", ".")) and d != "shared"]
        for f in files:
            if not (f.endswith((".c", ".h", ".cu", ".cpp", ".py", ".sh", ".pyx", ".ini",
                                ".txt", ".toml")) or f == "meson.build"):
                continue
            rel = os.path.relpath(os.path.join(base, f), ROOT)
            if rel in ("tests/test_compat.c", "tests/test_docs.py", "include/shoal/base.h"):
                continue
            text = open(os.path.join(base, f), encoding="utf-8", errors="replace").read()
            for no, line in enumerate(text.split("\n"), 1):
                if "SHOAL_ALLOW_0_1" in line:
                    problems.append(f"{rel}:{no}: SHOAL_ALLOW_0_1 outside tests/test_compat.c "
                                    "(the tree builds without the 0.1 names)")


def main():
    problems = []
    docs = documents()
    for doc in docs:
        check_document(doc, problems)
    # every dated result is linked from some document (docs/results/README.md lists them)
    for f in sorted(glob.glob(os.path.join(ROOT, "docs", "results", "*"))):
        rel = os.path.relpath(f, ROOT)
        if rel != os.path.join("docs", "results", "README.md") and rel not in LINKED:
            problems.append(f"{rel}: no document links it (list it in docs/results/README.md)")
    check_allow_0_1(problems)
    for p in problems:
        print(p)
    print(f"test_docs: {len(docs)} documents, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
